import { type ToolResult, toolFailure, toolSuccess } from "../../../domain/ToolResult"

export interface FetchedPage {
  readonly url: string
  readonly statusCode: number
  readonly content: string
  /** "http" for safe_http, "crawl4ai" for Crawl4AI. */
  readonly source: "http" | "crawl4ai"
  readonly serverName: "safe-http" | "crawl4ai"
  /** How the text was produced (markdown, plain-text fallback, raw, text): logged, not shown. */
  readonly conversion: string
}

interface SliceOptions {
  readonly startIndex: number
  readonly maxLength: number
  readonly executionTimeMs: number
}

/**
 * The success shape: `message` = `**URL:** <url>\n\n<slice>` (+ a continuation hint
 * naming `start_index=<next>` when more remains), repeated as `data.summary` so provider
 * adapters can send it once.
 */
export const sliceResult = (page: FetchedPage, options: SliceOptions): ToolResult => {
  const total = page.content.length
  const start = options.startIndex
  const end = Math.min(total, start + options.maxLength)
  const slice = start < total ? page.content.slice(start, end) : ""
  const nextIndex = end < total ? end : null
  const body =
    slice.trim() !== ""
      ? slice
      : start > 0 && total > 0
        ? `[End of page content: start_index=${start} is at or past the end of the content (${total} characters).]`
        : "[The page returned no readable content.]"
  const hint =
    nextIndex === null
      ? ""
      : `\n\n[Content truncated: showing characters ${start}–${end} of ${total}. Call fetch_url with the same url and start_index=${nextIndex} to continue reading.]`
  const message = `**URL:** ${page.url}\n\n${body}${hint}`
  const empty = slice.trim() === ""
  return toolSuccess(
    {
      summary: message,
      source: page.source,
      functionName: "fetch_url",
      serverName: page.serverName,
      rawResult: null,
      executionTime: options.executionTimeMs,
      status: "completed",
      contentLength: empty && start === 0 ? 0 : total,
      returnedContentLength: empty ? 0 : slice.length,
      startIndex: start,
      nextIndex,
      url: page.url,
      statusCode: page.statusCode
    },
    { message }
  )
}

/** What the model reads about a fetch that failed: the URL it asked for and the kind of failure. */
const FETCH_FAILED_MESSAGE = (url: string, failure: string): string =>
  `Could not fetch ${url}: ${failure}. Tell the user the page could not be read; do not invent its content.`

/**
 * A failed fetch: `error` is the kind of failure and `message` what the model reads, neither
 * with an address, a resolved IP or a server's words; `detail` keeps those for operators.
 */
export const fetchFailure = (requested: string, why: { readonly failure: string; readonly detail: string }): ToolResult =>
  toolFailure(why.failure, { message: FETCH_FAILED_MESSAGE(requested, why.failure), detail: why.detail })
