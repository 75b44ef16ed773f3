import { Effect, Redacted } from "effect"
import type { SearchSettings } from "../../../config/SearchConfig"
import { arrayField, field, parseJson, searchHttp, statusFailure } from "./searchHttp"
import { compactHits, hit, type SearchCategory, type SearchEngine, SearchEngineError, type SearchHit } from "./searchTypes"
import { parseJsonOrUndefined } from "../../../domain/parseJson"

const ENDPOINT: Readonly<Partial<Record<SearchCategory, { readonly path: string; readonly maxCount: number }>>> = {
  text: { path: "/res/v1/web/search", maxCount: 20 },
  image: { path: "/res/v1/images/search", maxCount: 200 },
  video: { path: "/res/v1/videos/search", maxCount: 50 },
  news: { path: "/res/v1/news/search", maxCount: 50 }
}

const NAME = "Brave Search"

const toHits = (category: SearchCategory, body: unknown): ReadonlyArray<SearchHit | undefined> => {
  if (category === "text") {
    return arrayField(body, "web", "results").map((result) =>
      hit({
        title: field(result, "title"),
        url: field(result, "url"),
        snippet: field(result, "description"),
        date: field(result, "page_age") ?? field(result, "age")
      })
    )
  }
  return arrayField(body, "results").map((result) =>
    category === "image"
      ? hit({
          title: field(result, "title"),
          url: field(result, "url"),
          imageUrl: field(result, "properties", "url") ?? field(result, "thumbnail", "src"),
          source: field(result, "source")
        })
      : hit({
          title: field(result, "title"),
          url: field(result, "url"),
          snippet: field(result, "description"),
          date: field(result, "page_age") ?? field(result, "age"),
          source: field(result, "meta_url", "hostname") ?? field(result, "video", "creator")
        })
  )
}

/**
 * Brave's error body names the problem better than the status (a bad key is 422, not 401): the
 * model reads the kind, the logs the code and detail.
 */
const braveError = (status: number, text: string): SearchEngineError => {
  const parsed = parseJsonOrUndefined(text)
  const code = field(parsed, "error", "code")
  const detail = field(parsed, "error", "detail")
  const reason = `HTTP ${status}${typeof code === "string" ? ` ${code}` : ""}${typeof detail === "string" ? `: ${detail}` : ""}`
  if (code === "SUBSCRIPTION_TOKEN_INVALID") return new SearchEngineError({ engine: NAME, failure: "the API key was refused", reason: `${reason} (BRAVE_API_KEY)` })
  return new SearchEngineError({ engine: NAME, failure: statusFailure(status), reason })
}

/** Brave Search API: web, images, videos, news (`X-Subscription-Token`). */
export const braveEngine = (settings: SearchSettings, apiKey: Redacted.Redacted<string>): SearchEngine => ({
  name: NAME,
  categories: new Set<SearchCategory>(["text", "image", "video", "news"]),
  search: (request) =>
    Effect.gen(function* () {
      const endpoint = ENDPOINT[request.category]
      if (endpoint === undefined) return yield* new SearchEngineError({ engine: NAME, failure: `no ${request.category} search`, reason: `no ${request.category} search` })
      const url = new URL(endpoint.path, `${settings.braveApiBaseUrl}/`)
      url.searchParams.set("q", request.query)
      url.searchParams.set("count", String(Math.min(request.count, endpoint.maxCount)))
      const response = yield* searchHttp({
        engine: NAME,
        url,
        headers: { accept: "application/json", "x-subscription-token": Redacted.value(apiKey) },
        timeout: settings.timeout,
        maxBytes: settings.maxResponseBytes,
        signal: request.signal
      })
      if (response.status !== 200) return yield* braveError(response.status, response.text)
      const body = yield* parseJson(NAME, response.text)
      return compactHits(toHits(request.category, body), request.count)
    })
})
