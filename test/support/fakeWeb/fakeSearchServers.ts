import type { IncomingMessage, ServerResponse } from "node:http"
import { pageServer } from "./pageServer"

/**
 * Loopback fakes of the search backends, speaking their real wire formats (research D.1–D.4):
 * SearXNG `/search?format=json`, the Brave Search API (`/res/v1/{web,images,videos,news}/search`
 * with `X-Subscription-Token`) and DuckDuckGo's HTML endpoint (`POST /html/`).
 */

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

const queryOf = (request: IncomingMessage): URLSearchParams => new URL(request.url ?? "/", "http://fake").searchParams

export interface SearxngFakeOptions {
  /** Answer 403 as an instance without `json` in `search.formats`. */
  readonly jsonDisabled?: boolean
  /** Results per category name (SearXNG's names: general, images, …); default: three per category. */
  readonly results?: Readonly<Record<string, number>>
}

const searxngResult = (query: string, category: string, index: number) => ({
  url: `https://${category}.example/${index}?q=${encodeURIComponent(query)}`,
  title: `${category} result ${index} for <b>${query}</b>`,
  content: `Snippet ${index} about ${query} &amp; more`,
  engine: "bing",
  engines: ["bing", "duckduckgo"],
  category,
  template: category === "images" ? "images.html" : "default.html",
  parsed_url: ["https", `${category}.example`, `/${index}`, "", `q=${query}`, ""],
  positions: [index + 1],
  score: 1 / (index + 1),
  priority: "",
  publishedDate: index === 0 ? "2026-05-01T00:00:00" : null,
  pubdate: "",
  thumbnail: "",
  img_src: category === "images" ? `https://img.example/${index}.jpg` : "",
  iframe_src: "",
  audio_src: "",
  length: null,
  views: "",
  author: "",
  metadata: "",
  open_group: false,
  close_group: false
})

export const fakeSearxng = (options: SearxngFakeOptions = {}) =>
  pageServer((request, response, body) => {
    const params = request.method === "POST" ? new URLSearchParams(body) : queryOf(request)
    const path = new URL(request.url ?? "/", "http://fake").pathname
    if (path !== "/search" && path !== "/") return json(response, 404, { error: "not found" })
    const format = params.get("format") ?? "html"
    if (format === "json" && options.jsonDisabled === true) {
      response.writeHead(403, { "content-type": "text/html" })
      response.end("<h1>403 Forbidden</h1>")
      return
    }
    const q = params.get("q") ?? ""
    if (q.trim() === "") return json(response, 400, { error: "No query" })
    const category = (params.get("categories") ?? "general").split(",")[0] ?? "general"
    const count = options.results?.[category] ?? 3
    json(response, 200, {
      query: q,
      number_of_results: count,
      results: Array.from({ length: count }, (_, index) => searxngResult(q, category, index)),
      answers: [],
      corrections: [],
      suggestions: [`${q} tutorial`],
      infoboxes: [],
      unresponsive_engines: [["google", "timeout"]]
    })
  })

export interface BraveFakeOptions {
  readonly apiKey: string
  /** Answer 429 with rate headers. */
  readonly rateLimited?: boolean
}

const braveError = (response: ServerResponse, status: number, code: string, detail: string) =>
  json(response, status, {
    type: "ErrorResponse",
    error: { id: "00000000-0000-0000-0000-000000000000", status, code, detail, meta: {} },
    time: 1767225600
  })

export const fakeBrave = (options: BraveFakeOptions) =>
  pageServer((request, response) => {
    const token = request.headers["x-subscription-token"]
    if (token === undefined) return braveError(response, 422, "VALIDATION", "Missing X-Subscription-Token header")
    if (token !== options.apiKey) return braveError(response, 422, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.")
    if (options.rateLimited === true) {
      response.writeHead(429, { "content-type": "application/json", "x-ratelimit-limit": "1, 2000", "x-ratelimit-remaining": "0, 1500", "x-ratelimit-reset": "1, 86400" })
      response.end(JSON.stringify({ type: "ErrorResponse", error: { status: 429, code: "RATE_LIMITED", detail: "Request rate limit exceeded" } }))
      return
    }
    const params = queryOf(request)
    const q = params.get("q") ?? ""
    const count = Number(params.get("count") ?? "10")
    const path = new URL(request.url ?? "/", "http://fake").pathname
    const limits: Record<string, number> = {
      "/res/v1/web/search": 20,
      "/res/v1/images/search": 200,
      "/res/v1/videos/search": 50,
      "/res/v1/news/search": 50
    }
    const limit = limits[path]
    if (limit === undefined) return braveError(response, 404, "NOT_FOUND", "Unknown endpoint")
    if (!Number.isInteger(count) || count < 1 || count > limit) return braveError(response, 422, "VALIDATION", `count must be 1..${limit}`)
    const n = Math.min(count, 3)
    const query = { original: q, more_results_available: true }
    if (path === "/res/v1/web/search") {
      return json(response, 200, {
        type: "search",
        query,
        mixed: { type: "mixed", main: [{ type: "web", index: 0, all: true }], top: [], side: [] },
        web: {
          type: "search",
          family_friendly: true,
          results: Array.from({ length: n }, (_, index) => ({
            type: "search_result",
            subtype: "generic",
            title: `Brave web ${index}: ${q}`,
            url: `https://brave.example/web/${index}`,
            description: `A <strong>${q}</strong> description ${index}`,
            page_age: "2026-04-30T12:00:00",
            age: "1 month ago",
            language: "en",
            family_friendly: true,
            is_source_local: false,
            is_source_both: false,
            is_live: false,
            meta_url: { scheme: "https", netloc: "brave.example", hostname: "brave.example", favicon: "", path: `› web › ${index}` }
          }))
        }
      })
    }
    if (path === "/res/v1/images/search") {
      return json(response, 200, {
        type: "images",
        query,
        results: Array.from({ length: n }, (_, index) => ({
          type: "image_result",
          title: `Brave image ${index}: ${q}`,
          url: `https://brave.example/page/${index}`,
          source: "brave.example",
          page_fetched: "2026-04-30T12:00:00",
          thumbnail: { src: `https://imgs.search.brave.com/thumb/${index}` },
          properties: { url: `https://brave.example/full/${index}.jpg`, placeholder: "" },
          meta_url: { scheme: "https", netloc: "brave.example", hostname: "brave.example", favicon: "", path: "" },
          confidence: "high"
        })),
        extra: { might_be_offensive: false }
      })
    }
    const kind = path.includes("videos") ? "video" : "news"
    return json(response, 200, {
      type: kind === "video" ? "videos" : "news",
      query,
      results: Array.from({ length: n }, (_, index) => ({
        type: `${kind}_result`,
        url: `https://brave.example/${kind}/${index}`,
        title: `Brave ${kind} ${index}: ${q}`,
        description: `${kind} about ${q}`,
        age: "2 days ago",
        page_age: "2026-05-20T08:00:00",
        meta_url: { scheme: "https", netloc: "brave.example", hostname: "brave.example", favicon: "", path: "" },
        ...(kind === "video" ? { video: { duration: "03:10", views: 1000, creator: "Creator", publisher: "Brave" } } : {})
      })),
      ...(kind === "video" ? { extra: { might_be_offensive: false } } : {})
    })
  })

export interface DuckDuckGoFakeOptions {
  /** Answer with the bot-check page. */
  readonly challenge?: boolean
}

export const fakeDuckDuckGo = (options: DuckDuckGoFakeOptions = {}) =>
  pageServer((request, response, body) => {
    const path = new URL(request.url ?? "/", "http://fake").pathname
    if (path !== "/html/" || request.method !== "POST") {
      response.writeHead(405)
      response.end()
      return
    }
    const q = new URLSearchParams(body).get("q") ?? ""
    response.writeHead(200, { "content-type": "text/html; charset=UTF-8" })
    if (options.challenge === true) {
      response.end(`<html><body><form id="challenge-form" action="/anomaly.js"><p>Select all squares containing a duck</p></form></body></html>`)
      return
    }
    const result = (index: number, ad: boolean) => `
      <div class="result results_links results_links_deep web-result ${ad ? "result--ad" : ""}">
        <div class="links_main links_deep result__body">
          <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(`https://ddg.example/${ad ? "ad" : index}`)}&amp;rut=abc">DDG ${ad ? "ad" : index}: ${q}</a></h2>
          <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="#">ddg.example/${index}</a></div></div>
          <a class="result__snippet" href="#">Snippet <b>${q}</b> number ${index} &amp; friends</a>
        </div>
      </div>`
    response.end(
      `<!DOCTYPE html><html><head><title>${q} at DuckDuckGo</title></head><body><div id="links" class="results">${result(0, true)}${[0, 1, 2].map((index) => result(index, false)).join("")}</div></body></html>`
    )
  })
