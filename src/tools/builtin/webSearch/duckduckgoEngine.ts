import { Effect } from "effect"
import type { SearchSettings } from "../../../config/SearchConfig"
import { CONVERTER_LIMITS, type ParseHtml } from "../../../fetch/html/convertHtml"
import { scanHtml } from "../../../fetch/html/scanHtml"
import { searchHttp, statusFailure } from "./searchHttp"
import { compactHits, hit, type SearchCategory, type SearchEngine, SearchEngineError, type SearchHit } from "./searchTypes"

const NAME = "DuckDuckGo"

interface ResultNode {
  readonly textContent: string | null
  readonly getAttribute: (name: string) => string | null
  readonly querySelector: (selector: string) => ResultNode | null
}

interface ResultDocument {
  readonly querySelector: (selector: string) => ResultNode | null
  readonly querySelectorAll: (selector: string) => ArrayLike<ResultNode>
}

/** DuckDuckGo wraps result links in `/l/?uddg=<target>`; unwrap to the real page. */
const unwrapDuckDuckGoLink = (href: string | null): string | undefined => {
  if (href === null) return undefined
  const absolute = href.startsWith("//") ? `https:${href}` : href
  if (!URL.canParse(absolute)) return undefined
  const url = new URL(absolute)
  const target = url.searchParams.get("uddg")
  return target ?? (url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined)
}

/** Results of the HTML endpoint's page (`div.result` blocks, ads skipped). */
const parseDuckDuckGoHtml = (parseHTML: ParseHtml, html: string): ReadonlyArray<SearchHit | undefined> | "challenge" | "unreadable" => {
  const shape = scanHtml(html)
  if (shape.maxDepth > CONVERTER_LIMITS.maxDepth || shape.elements + shape.references > CONVERTER_LIMITS.maxNodes) {
    return "unreadable"
  }
  const document = parseHTML(html).document as unknown as ResultDocument
  if (document.querySelector("form#challenge-form, .anomaly-modal") !== null) return "challenge"
  return Array.from(document.querySelectorAll("div.result:not(.result--ad)")).map((node) => {
    const link = node.querySelector("a.result__a")
    return hit({
      title: link?.textContent,
      url: unwrapDuckDuckGoLink(link?.getAttribute("href") ?? null),
      snippet: node.querySelector(".result__snippet")?.textContent
    })
  })
}

/** DuckDuckGo's HTML endpoint (`POST /html/`): text only, no key; the last resort. */
export const duckduckgoEngine = (settings: SearchSettings): SearchEngine => ({
  name: NAME,
  categories: new Set<SearchCategory>(["text"]),
  search: (request) =>
    Effect.gen(function* () {
      const response = yield* searchHttp({
        engine: NAME,
        url: new URL("html/", `${settings.duckduckgoBaseUrl}/`),
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
        body: new URLSearchParams({ q: request.query, kl: "wt-wt" }).toString(),
        timeout: settings.timeout,
        maxBytes: settings.maxResponseBytes,
        signal: request.signal
      })
      if (response.status !== 200) return yield* new SearchEngineError({ engine: NAME, failure: statusFailure(response.status), reason: `HTTP ${response.status}` })
      // linkedom loads only when DuckDuckGo is actually asked (it is the last resort).
      const { parseHTML } = yield* Effect.promise(() => import("linkedom"))
      const parsed = parseDuckDuckGoHtml(parseHTML, response.text)
      if (parsed === "challenge") return yield* new SearchEngineError({ engine: NAME, failure: "asked for a bot check", reason: "asked for a CAPTCHA (bot check)" })
      if (parsed === "unreadable") return yield* new SearchEngineError({ engine: NAME, failure: "an unreadable answer", reason: "the result page could not be read" })
      return compactHits(parsed, request.count)
    })
})
