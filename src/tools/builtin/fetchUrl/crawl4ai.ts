import { Data, Duration, Effect } from "effect"
import { fetch as undiciFetch } from "undici"
import { capReadableStream } from "../../../fetch/ResponseSizeError"

class Crawl4aiError extends Data.TaggedError("Crawl4aiError")<{ readonly reason: string }> {
  override get message(): string {
    return `Crawl4AI: ${this.reason}`
  }
}

const describe = (cause: unknown): string =>
  cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message) : String(cause)

/**
 * Asks a Crawl4AI server (`POST {base}/md`, filter "fit") for a page's Markdown. The base URL is
 * admin-configured (often a private address), so it is not subject to the address policy; the
 * target URL already passed gate 1, and the engine is only admitted where private-network
 * fetching is permitted (development, or the opt-in). Interruption aborts the request.
 */
export const crawl4aiMarkdown = (options: {
  readonly baseUrl: string
  readonly url: string
  readonly timeout: Duration.Duration
  readonly maxBytes: number
  readonly signal: AbortSignal
}): Effect.Effect<string, Crawl4aiError> =>
  Effect.tryPromise({
    try: async (interrupted) => {
      const response = await undiciFetch(new URL("md", options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ url: options.url, f: "fit", q: null, c: "0" }),
        signal: AbortSignal.any([interrupted, options.signal])
      })
      const body = response.body as ReadableStream<Uint8Array> | null
      const text =
        body === null
          ? ""
          : await new Response(
              capReadableStream(body, options.maxBytes, () => new Error("response larger than the fetch size limit"))
            ).text()
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const json: unknown = JSON.parse(text)
      const markdown =
        typeof json === "object" && json !== null && "markdown" in json && typeof json.markdown === "string"
          ? json.markdown
          : undefined
      const success = typeof json === "object" && json !== null && "success" in json ? json.success !== false : true
      if (!success || markdown === undefined) throw new Error("no markdown in the response")
      return markdown
    },
    catch: (cause) => new Crawl4aiError({ reason: describe(cause) })
  }).pipe(
    Effect.timeoutOrElse({
      duration: options.timeout,
      orElse: () =>
        Effect.fail(new Crawl4aiError({ reason: `timed out after ${Duration.toMillis(options.timeout)} ms` }))
    })
  )
