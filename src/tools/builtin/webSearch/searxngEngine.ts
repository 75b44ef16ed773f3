import { Effect } from "effect"
import type { SearchSettings } from "../../../config/SearchConfig"
import { arrayField, field, parseJson, searchHttp, statusFailure } from "./searchHttp"
import { compactHits, hit, type SearchCategory, type SearchEngine, SearchEngineError } from "./searchTypes"

/** Our categories → SearXNG's category names (its default tabs). */
const SEARXNG_CATEGORY: Readonly<Record<SearchCategory, string>> = {
  text: "general",
  image: "images",
  video: "videos",
  news: "news",
  papers: "science",
  code: "it",
  files: "files",
  music: "music"
}

const NAME = "SearXNG"

/** A self-hosted SearXNG (`GET /search?format=json`), all eight categories. */
export const searxngEngine = (settings: SearchSettings, baseUrl: string): SearchEngine => ({
  name: NAME,
  categories: new Set(Object.keys(SEARXNG_CATEGORY) as Array<SearchCategory>),
  search: (request) =>
    Effect.gen(function* () {
      const url = new URL("search", `${baseUrl}/`)
      url.searchParams.set("q", request.query)
      url.searchParams.set("format", "json")
      url.searchParams.set("categories", SEARXNG_CATEGORY[request.category])
      url.searchParams.set("pageno", "1")
      const response = yield* searchHttp({
        engine: NAME,
        url,
        headers: { accept: "application/json" },
        timeout: settings.timeout,
        maxBytes: settings.maxResponseBytes,
        signal: request.signal
      })
      if (response.status === 403) {
        return yield* new SearchEngineError({
          engine: NAME,
          failure: statusFailure(403),
          reason: "HTTP 403: the JSON format is not enabled on this instance (search.formats in settings.yml)"
        })
      }
      if (response.status !== 200) return yield* new SearchEngineError({ engine: NAME, failure: statusFailure(response.status), reason: `HTTP ${response.status}` })
      const body = yield* parseJson(NAME, response.text)
      return compactHits(
        arrayField(body, "results").map((result) =>
          hit({
            title: field(result, "title"),
            url: field(result, "url"),
            snippet: field(result, "content"),
            date: field(result, "publishedDate"),
            imageUrl: request.category === "image" ? field(result, "img_src") : undefined,
            source: request.category === "image" || request.category === "video" ? field(result, "source") ?? field(result, "author") : undefined
          })
        ),
        request.count
      )
    })
})
