import { Clock, Effect, Option, Schema } from "effect"
import { FetchConfig } from "../../../config/FetchConfig"
import type { ToolResult } from "../../../domain/ToolResult"
import { AddressPolicy, PRIVATE_NETWORK_OPT_IN, type UrlPolicyError } from "../../../fetch/AddressPolicy"
import { HtmlConverter } from "../../../fetch/html/HtmlConverter"
import { SafeHttp } from "../../../fetch/SafeHttp"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { crawl4aiMarkdown } from "./crawl4ai"
import { resolveEngineOrder } from "./engineOrder"
import { FETCH_FAILED_MESSAGE, fetchFailure, type FetchedPage, sliceResult } from "./fetchResult"
import { isTextual, pageText } from "./pageText"

export const FETCH_URL = "fetch_url"

const MIB = 1024 * 1024

const FetchUrlArgs = Schema.Struct({
  url: Schema.String.pipe(
    Schema.filter((value) => value.trim().length > 0, {
      message: () => "url must be a non-empty string",
      description: "The http(s) URL of the page to read.",
      jsonSchema: { minLength: 1 }
    })
  ),
  max_length: Schema.optional(
    Schema.Number.pipe(
      Schema.filter((value) => value > 0, {
        message: () => "max_length must be a positive number",
        description: "Maximum number of characters to return (capped by the server limit).",
        jsonSchema: { exclusiveMinimum: 0 }
      })
    )
  ),
  start_index: Schema.optional(
    Schema.Number.pipe(
      Schema.filter((value) => value >= 0, {
        message: () => "start_index must be a non-negative number",
        description: "Character offset to start from, to continue a page that was cut off.",
        jsonSchema: { minimum: 0 }
      })
    )
  ),
  raw: Schema.optional(
    Schema.Boolean.annotations({ description: "Return the page as received (HTML unconverted) instead of Markdown." })
  )
})

const DESCRIPTION =
  "Read a web page: fetches an http(s) URL and returns its main content as Markdown. " +
  "Long pages come in slices; when a result says it was truncated, call again with the start_index it names."

const mb = (bytes: number): string => `${Math.round((bytes / MIB) * 100) / 100}`

/** Gate-1 refusal (spec §7.1): `error` carries code and details; `message` is what the model reads. */
const policyFailure = (error: UrlPolicyError): ToolResult =>
  fetchFailure(
    `${error.code}: ${error.message}`,
    error.code === "PRIVATE_NETWORK_BLOCKED"
      ? `${error.message} Explain to the user why the page cannot be fetched${error.alwaysBlocked === true ? "" : ` (an administrator can set ${PRIVATE_NETWORK_OPT_IN})`}.`
      : FETCH_FAILED_MESSAGE(error.host || "the URL", error.message)
  )

/**
 * `fetch_url` (spec §7): argument validation, gate 1 (AddressPolicy), HEAD size preflight,
 * engine chain (Crawl4AI where admitted, safe_http always last), Markdown conversion and
 * slicing. Dependencies are resolved here, so `execute` only needs the ToolContext.
 */
export const fetchUrlTool: Effect.Effect<Tool, never, FetchConfig | AddressPolicy | SafeHttp | HtmlConverter> = Effect.gen(function* () {
  const config = yield* FetchConfig
  const policy = yield* AddressPolicy
  const http = yield* SafeHttp
  const converter = yield* HtmlConverter
  const engines = resolveEngineOrder(config.engineOrder, { allowPrivateNetwork: config.allowPrivateNetwork })
  for (const { name, reason } of engines.dropped) {
    yield* Effect.logWarning(`FETCH_URL_ENGINE_ORDER: ignoring "${name}" (${reason})`)
  }

  /** HEAD preflight (spec §7.1): only a Content-Length over the cap stops the fetch. */
  const sizePreflight = (url: URL, signal: AbortSignal) =>
    http.request({ url, method: "HEAD", timeout: config.headTimeout, signal }).pipe(
      Effect.map((response) => {
        const length = Number(response.headers.get("content-length") ?? Number.NaN)
        return Number.isFinite(length) && length > config.maxBodyBytes ? Option.some(length) : Option.none()
      }),
      Effect.catchAll(() => Effect.succeedNone)
    )

  const safeHttpEngine = (url: URL, raw: boolean, signal: AbortSignal) =>
    http.request({ url, signal }).pipe(
      Effect.flatMap((response): Effect.Effect<FetchedPage, { readonly message: string }> => {
        if (response.status < 200 || response.status > 299) {
          return Effect.fail({ message: `HTTP ${response.status}` })
        }
        const contentType = response.headers.get("content-type")
        if (!isTextual(contentType)) {
          return Effect.fail({ message: `Unsupported content type ${contentType ?? ""}: fetch_url reads text and HTML pages` })
        }
        return pageText(converter, response.body, contentType, { raw, url: response.url }).pipe(
          Effect.map((text): FetchedPage => ({
            url: response.url.href,
            statusCode: response.status,
            content: text.text,
            source: "http",
            serverName: "safe-http",
            conversion: text.mode
          }))
        )
      })
    )

  const crawl4aiEngine = (url: URL, signal: AbortSignal) =>
    Option.match(config.crawl4aiBaseUrl, {
      onNone: () => Effect.fail({ message: "CRAWL4AI_BASE_URL is not set" }),
      onSome: (baseUrl) =>
        crawl4aiMarkdown({ baseUrl, url: url.href, timeout: config.timeout, maxBytes: config.maxBodyBytes, signal }).pipe(
          Effect.map(
            (markdown): FetchedPage => ({
              url: url.href,
              statusCode: 200,
              content: markdown,
              source: "crawl4ai",
              serverName: "crawl4ai",
              conversion: "markdown"
            })
          )
        )
    })

  return makeTool({
    name: FETCH_URL,
    description: DESCRIPTION,
    category: "search",
    parameters: FetchUrlArgs,
    requiresFollowUp: true,
    isAvailableFor: (provider) => provider !== "novelai",
    execute: (args) =>
      Effect.gen(function* () {
        const context = yield* ToolContext
        const started = yield* Clock.currentTimeMillis
        const target = yield* Effect.either(policy.validate(args.url))
        if (target._tag === "Left") return policyFailure(target.left)
        const url = target.right.url

        const tooLarge = yield* sizePreflight(url, context.abortSignal)
        if (Option.isSome(tooLarge)) {
          const text = `Content size (${mb(tooLarge.value)} MB) exceeds maximum allowed size (${mb(config.maxBodyBytes)} MB)`
          return fetchFailure(text, FETCH_FAILED_MESSAGE(url.href, text))
        }
        if (!context.suppressProgressNotices) yield* context.progress(`Fetching ${url.href}`)

        const raw = args.raw === true
        let lastError: string | undefined
        for (const engine of engines.order) {
          const attempt = engine === "crawl4ai" ? crawl4aiEngine(url, context.abortSignal) : safeHttpEngine(url, raw, context.abortSignal)
          const page = yield* Effect.either(attempt)
          if (page._tag === "Right") {
            if (page.right.conversion === "plain-text") {
              yield* Effect.logDebug(`fetch_url: ${url.origin} converted as plain text (hostile or oversized HTML)`)
            }
            const finished = yield* Clock.currentTimeMillis
            return sliceResult(page.right, {
              startIndex: Math.floor(args.start_index ?? 0),
              maxLength: Math.min(Math.floor(args.max_length ?? config.maxContentLength), config.maxContentLength),
              executionTimeMs: finished - started
            })
          }
          lastError = page.left.message
          yield* Effect.logDebug(`fetch_url: engine ${engine} failed for ${url.origin}: ${lastError}`)
        }
        const error = lastError ?? "No URL fetch engine is available"
        return fetchFailure(error, FETCH_FAILED_MESSAGE(url.href, error))
      })
  })
})
