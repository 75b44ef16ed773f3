import { Clock, Effect, Option, Schema } from "effect"
import { FetchConfig } from "../../../config/FetchConfig"
import { toolFailureClassText } from "../../../domain/ToolFailureClass"
import type { ToolResult } from "../../../domain/ToolResult"
import { AddressPolicy, type UrlPolicyError } from "../../../fetch/AddressPolicy"
import { HtmlConverter } from "../../../fetch/html/HtmlConverter"
import { SafeHttp, type SafeHttpFailure } from "../../../fetch/SafeHttp"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { crawl4aiMarkdown } from "./crawl4ai"
import { resolveEngineOrder } from "./engineOrder"
import { fetchFailure, type FetchedPage, sliceResult } from "./fetchResult"
import { isTextual, pageText } from "./pageText"

export const FETCH_URL = "fetch_url"

const MIB = 1024 * 1024

const FetchUrlArgs = Schema.Struct({
  url: Schema.String.check(
    Schema.makeFilter((value: string) => value.trim().length > 0 || "url must be a non-empty string", {
      description: "The http(s) URL of the page to read.",
      toJsonSchema: () => ({ minLength: 1 })
    })
  ),
  max_length: Schema.optional(
    Schema.Number.check(
      Schema.makeFilter((value: number) => value > 0 || "max_length must be a positive number", {
        description: "Maximum number of characters to return (capped by the server limit).",
        toJsonSchema: () => ({ exclusiveMinimum: 0 })
      })
    )
  ),
  start_index: Schema.optional(
    Schema.Number.check(
      Schema.makeFilter((value: number) => value >= 0 || "start_index must be a non-negative number", {
        description: "Character offset to start from, to continue a page that was cut off.",
        toJsonSchema: () => ({ minimum: 0 })
      })
    )
  ),
  raw: Schema.optional(
    Schema.Boolean.annotate({ description: "Return the page as received (HTML unconverted) instead of Markdown." })
  )
})

const DESCRIPTION =
  "Read a web page: fetches an http(s) URL and returns its main content as Markdown. " +
  "Long pages come in slices; when a result says it was truncated, call again with the start_index it names."

const mb = (bytes: number): string => `${Math.round((bytes / MIB) * 100) / 100}`

/** Why one engine could not read the page: a class for the model, the details for operators. */
interface EngineFailure {
  readonly failure: string
  readonly detail: string
}

/** A safe_http failure by its kind; hosts, addresses and network errors stay in the detail. */
const httpFailure = (error: SafeHttpFailure, maxBodyBytes: number): EngineFailure => {
  switch (error._tag) {
    case "ResponseSizeError":
      return { failure: `${toolFailureClassText.too_large} (over ${mb(maxBodyBytes)} MB)`, detail: error.message }
    case "UrlPolicyError":
      return { failure: toolFailureClassText[error.failureClass], detail: `${error.code}: ${error.message}` }
    case "SafeHttpError":
      return { failure: toolFailureClassText[error.failureClass], detail: `${error.code}: ${error.message}` }
  }
}

/** Gate-1 refusal (the address policy, before any request): the model reads the kind of refusal only. */
const policyFailure = (requested: string, error: UrlPolicyError): ToolResult =>
  fetchFailure(requested, { failure: toolFailureClassText[error.failureClass], detail: `${error.code}: ${error.message}` })

/**
 * `fetch_url`: argument validation, gate 1 (AddressPolicy), engine chain (Crawl4AI
 * where admitted, safe_http always last), Markdown conversion and slicing. One GET per hop:
 * the type and the size are judged from its headers (a declared length over the cap, or a type
 * that is not text, stops it before the body is read) and the byte cap. Dependencies are
 * resolved here, so `execute` only needs the ToolContext.
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

  /** Only a 2xx text or HTML answer is worth its body. */
  const readable = (head: { readonly status: number; readonly headers: ReadonlyMap<string, string> }) =>
    head.status >= 200 && head.status <= 299 && isTextual(head.headers.get("content-type"))

  const safeHttpEngine = (url: URL, raw: boolean, signal: AbortSignal) =>
    http.request({ url, signal, readBody: readable }).pipe(
      Effect.mapError((error) => httpFailure(error, config.maxBodyBytes)),
      Effect.flatMap((response): Effect.Effect<FetchedPage, EngineFailure> => {
        if (response.status < 200 || response.status > 299) {
          return Effect.fail({ failure: `the site answered HTTP ${response.status}`, detail: `${response.url.origin}${response.url.pathname} answered HTTP ${response.status}` })
        }
        const contentType = response.headers.get("content-type")
        if (!isTextual(contentType)) {
          return Effect.fail({ failure: "not a text or HTML page", detail: `unsupported content type ${contentType ?? "(none)"}` })
        }
        return pageText(converter, response.body, contentType, { raw, url: response.url }).pipe(
          Effect.mapError((error): EngineFailure => ({ failure: "the page could not be converted", detail: error.message })),
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
      onNone: (): Effect.Effect<FetchedPage, EngineFailure> => Effect.fail({ failure: "the page reader is not configured", detail: "CRAWL4AI_BASE_URL is not set" }),
      onSome: (baseUrl) =>
        crawl4aiMarkdown({ baseUrl, url: url.href, timeout: config.timeout, maxBytes: config.maxBodyBytes, signal }).pipe(
          Effect.mapError((error): EngineFailure => ({ failure: "the page reader failed", detail: error.message })),
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
        const target = yield* Effect.result(policy.validate(args.url))
        if (target._tag === "Failure") return policyFailure(URL.canParse(args.url.trim()) ? args.url.trim() : "the URL", target.failure)
        const url = target.success.url
        if (!context.suppressProgressNotices) yield* context.progress(`Fetching ${url.href}`)

        const raw = args.raw === true
        let lastError: EngineFailure | undefined
        for (const engine of engines.order) {
          const attempt = engine === "crawl4ai" ? crawl4aiEngine(url, context.abortSignal) : safeHttpEngine(url, raw, context.abortSignal)
          const page = yield* Effect.result(attempt)
          if (page._tag === "Success") {
            if (page.success.conversion === "plain-text") {
              yield* Effect.logDebug(`fetch_url: ${url.origin} converted as plain text (hostile or oversized HTML)`)
            }
            const finished = yield* Clock.currentTimeMillis
            return sliceResult(page.success, {
              startIndex: Math.floor(args.start_index ?? 0),
              maxLength: Math.min(Math.floor(args.max_length ?? config.maxContentLength), config.maxContentLength),
              executionTimeMs: finished - started
            })
          }
          lastError = page.failure
          yield* Effect.logDebug(`fetch_url: engine ${engine} failed for ${url.origin}: ${lastError.failure} (${lastError.detail})`)
        }
        return fetchFailure(url.href, lastError ?? { failure: "no fetch engine is available", detail: "no engine in FETCH_URL_ENGINE_ORDER could run" })
      })
  })
})
