import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { SearchConfig, type SearchSettings } from "../../../../src/config/SearchConfig"
import type { ToolArgs } from "../../../../src/domain/FunctionCall"
import { webSearchTool } from "../../../../src/tools/builtin/webSearch/WebSearchTool"
import type { SearchHit } from "../../../../src/tools/builtin/webSearch/searchTypes"
import type { AssemblyContext, Tool } from "../../../../src/tools/Tool"
import { ToolContext } from "../../../../src/tools/ToolContext"
import { initialTurnFlags } from "../../../../src/tools/TurnState"
import { sameHostHop } from "../../../../src/tools/builtin/webSearch/searchHttp"
import { fakeBrave, fakeDuckDuckGo, fakeSearxng } from "../../../support/fakeWeb/fakeSearchServers"
import { pageServer } from "../../../support/fakeWeb/pageServer"
import { testToolContext } from "../../../support/fakeWeb/webTestKit"

const turn: AssemblyContext = {
  provider: "openai-compatible",
  model: "test-model",
  guildId: "guild-1",
  channelId: "channel-1",
  flags: initialTurnFlags,
  availableToolNames: new Set(["web_search", "fetch_url"])
}

/** No test may reach the real DuckDuckGo: the fallback always points at a closed loopback port unless given. */
const CLOSED = "http://127.0.0.1:9"

const buildTool = (overrides: Partial<SearchSettings>) =>
  webSearchTool.pipe(Effect.provide(SearchConfig.make({ duckduckgoBaseUrl: CLOSED, ...overrides })))

const assembled = (tool: Tool) =>
  Effect.gen(function* () {
    const variant = tool.assembleForContext === undefined ? tool : yield* Effect.orDie(tool.assembleForContext(turn))
    assert.isNotNull(variant)
    return variant as Tool
  })

const enumOf = (tool: Tool): ReadonlyArray<string> =>
  (tool.parameters.properties as Record<string, { enum?: ReadonlyArray<string> }>)["category"]?.enum ?? []

const search = (tool: Tool, args: ToolArgs) =>
  Effect.gen(function* () {
    const { context } = yield* testToolContext()
    return yield* Effect.provideService(tool.execute(args), ToolContext, context).pipe(Effect.orDie)
  })

interface SearchData {
  readonly query: string
  readonly category: string
  readonly engine: string
  readonly results: ReadonlyArray<SearchHit>
}
const dataOf = (data: unknown): SearchData => data as SearchData

describe("web_search", () => {
  it.effect("[79] assembly advertises exactly the categories the backends serve", () =>
    Effect.gen(function* () {
      const searxng = yield* assembled(yield* buildTool({ searxngBaseUrl: Option.some("http://127.0.0.1:9") }))
      assert.deepStrictEqual(enumOf(searxng), ["text", "image", "video", "news", "papers", "code", "files", "music"])
      assert.include(searxng.description, "(SearXNG)")
      const both = yield* assembled(
        yield* buildTool({ searxngBaseUrl: Option.some("http://127.0.0.1:9"), braveApiKey: Option.some(Redacted.make("k")) })
      )
      assert.strictEqual(enumOf(both).length, 8)
      assert.include(both.description, "Brave Search + SearXNG")
      const brave = yield* assembled(yield* buildTool({ braveApiKey: Option.some(Redacted.make("k")) }))
      assert.deepStrictEqual(enumOf(brave), ["text", "image", "video", "news"])
      const neither = yield* assembled(yield* buildTool({}))
      assert.deepStrictEqual(enumOf(neither), ["text"])
      assert.include(neither.description, "Only the 'text' category is available")
      for (const variant of [searxng, both, brave, neither]) {
        assert.notMatch(variant.description, /may be unavailable/i)
        assert.strictEqual(variant.requiresFollowUp, true)
        assert.strictEqual(variant.category, "search")
      }
    })
  )

  it.effect("Brave serves text, images, videos and news with the key in X-Subscription-Token", () =>
    Effect.gen(function* () {
      const brave = yield* fakeBrave({ apiKey: "secret-key" })
      const tool = yield* buildTool({ braveApiKey: Option.some(Redacted.make("secret-key")), braveApiBaseUrl: brave.origin })
      const text = yield* search(tool, { query: "effect ts", count: 2.9 })
      assert.isTrue(text.success)
      assert.deepStrictEqual(dataOf(text.data).results, [
        { title: "Brave web 0: effect ts", url: "https://brave.example/web/0", snippet: "A effect ts description 0", date: "2026-04-30T12:00:00" },
        { title: "Brave web 1: effect ts", url: "https://brave.example/web/1", snippet: "A effect ts description 1", date: "2026-04-30T12:00:00" }
      ])
      const image = yield* search(tool, { query: "ducks", category: "image" })
      assert.deepStrictEqual(dataOf(image.data).results[0], {
        title: "Brave image 0: ducks",
        url: "https://brave.example/page/0",
        imageUrl: "https://brave.example/full/0.jpg",
        source: "brave.example"
      })
      const video = yield* search(tool, { query: "ducks", category: "video" })
      assert.strictEqual(dataOf(video.data).results[0]?.url, "https://brave.example/video/0")
      const news = yield* search(tool, { query: "ducks", category: "NEWS" })
      assert.strictEqual(dataOf(news.data).category, "news")
      assert.strictEqual(dataOf(news.data).results[0]?.date, "2026-05-20T08:00:00")
      assert.deepStrictEqual(
        brave.requests.map((request) => new URL(request.url, "http://x").pathname),
        ["/res/v1/web/search", "/res/v1/images/search", "/res/v1/videos/search", "/res/v1/news/search"]
      )
      assert.isTrue(brave.requests.every((request) => request.headers["x-subscription-token"] === "secret-key"))
      assert.strictEqual(new URL(brave.requests[0]?.url ?? "", "http://x").searchParams.get("count"), "2")
    })
  )

  it.effect("engine order Brave → SearXNG → DuckDuckGo: failures fall through", () =>
    Effect.gen(function* () {
      const brave = yield* fakeBrave({ apiKey: "right" })
      const searxng = yield* fakeSearxng({ jsonDisabled: true })
      const ddg = yield* fakeDuckDuckGo()
      const tool = yield* buildTool({
        braveApiKey: Option.some(Redacted.make("wrong")),
        braveApiBaseUrl: brave.origin,
        searxngBaseUrl: Option.some(searxng.origin),
        duckduckgoBaseUrl: ddg.origin
      })
      const result = yield* search(tool, { query: "fall through" })
      assert.isTrue(result.success)
      assert.strictEqual(dataOf(result.data).engine, "DuckDuckGo")
      assert.deepStrictEqual(dataOf(result.data).results.map((entry) => entry.url), [
        "https://ddg.example/0",
        "https://ddg.example/1",
        "https://ddg.example/2"
      ])
      assert.strictEqual(dataOf(result.data).results[0]?.snippet, "Snippet fall through number 0 & friends")
      assert.deepStrictEqual([brave.requests.length, searxng.requests.length, ddg.requests.length], [1, 1, 1])
      // SearXNG is the only engine for papers; its failure is the reported one.
      const papers = yield* search(tool, { query: "quantum", category: "papers" })
      assert.isFalse(papers.success)
      assert.strictEqual(papers.error, "SearXNG: refused the request (HTTP 403)")
      assert.strictEqual(papers.message, "Web search for papers results is unavailable right now (SearXNG: refused the request (HTTP 403)). Tell the user the search failed; do not invent results.")
      assert.include(papers.detail ?? "", "search.formats in settings.yml")
    })
  )

  it.effect("SearXNG maps our categories onto its own and returns compact results", () =>
    Effect.gen(function* () {
      const searxng = yield* fakeSearxng()
      const tool = yield* buildTool({ searxngBaseUrl: Option.some(searxng.origin) })
      const expected: Record<string, string> = { text: "general", image: "images", video: "videos", news: "news", papers: "science", code: "it", files: "files", music: "music" }
      for (const [category, searxngCategory] of Object.entries(expected)) {
        const result = yield* search(tool, { query: "rust", category })
        assert.isTrue(result.success, category)
        assert.strictEqual(dataOf(result.data).engine, "SearXNG")
        assert.include(dataOf(result.data).results[0]?.url ?? "", `https://${searxngCategory}.example/0`)
      }
      const first = dataOf((yield* search(tool, { query: "rust" })).data).results[0]
      assert.deepStrictEqual(first, {
        title: "general result 0 for rust",
        url: "https://general.example/0?q=rust",
        snippet: "Snippet 0 about rust & more",
        date: "2026-05-01T00:00:00"
      })
      const params = new URL(searxng.requests[0]?.url ?? "", "http://x").searchParams
      assert.strictEqual(params.get("format"), "json")
      assert.strictEqual(params.get("categories"), "general")
    })
  )

  it.effect("bad input: empty query fails, unknown category means text, all engines failing is a clear failure", () =>
    Effect.gen(function* () {
      const ddg = yield* fakeDuckDuckGo({ challenge: true })
      const tool = yield* buildTool({ duckduckgoBaseUrl: ddg.origin })
      const empty = yield* search(tool, { query: "   " })
      assert.isFalse(empty.success)
      assert.strictEqual(ddg.requests.length, 0)
      const unknown = yield* search(tool, { query: "x", category: "holograms" })
      assert.isFalse(unknown.success)
      assert.strictEqual(unknown.error, "DuckDuckGo: asked for a bot check")
      assert.include(unknown.detail ?? "", "DuckDuckGo: asked for a CAPTCHA")
      assert.include(unknown.message ?? "", "text results")
      const missing = yield* search(tool, { count: 3 })
      assert.isFalse(missing.success)
      assert.include(missing.error ?? "", "Invalid arguments for web_search")
      const down = yield* search(yield* buildTool({}), { query: "x" })
      assert.isFalse(down.success)
      // A refused connection: the model reads "unreachable", never the address or the socket error.
      assert.strictEqual(down.message, "Web search for text results is unavailable right now (DuckDuckGo: unreachable). Tell the user the search failed; do not invent results.")
      assert.notInclude(down.message ?? "", "127.0.0.1")
      assert.include(down.detail ?? "", "DuckDuckGo: request failed")
    })
  )

  it.effect("no results anywhere is a success with an empty list", () =>
    Effect.gen(function* () {
      const searxng = yield* fakeSearxng({ results: { general: 0 } })
      const tool = yield* buildTool({ searxngBaseUrl: Option.some(searxng.origin) })
      const result = yield* search(tool, { query: "zzzz" })
      assert.isTrue(result.success)
      assert.deepStrictEqual(dataOf(result.data).results, [])
      assert.include(result.message ?? "", "No text results")
    })
  )

  describe("[issue 25] redirects never carry a search key to another origin", () => {
    it.effect("Brave redirected to another host: not followed, the other host gets no request and never the key", () =>
      Effect.gen(function* () {
        const elsewhere = yield* pageServer((_request, response) => response.end("{}"))
        const brave = yield* pageServer((_request, response) => {
          response.writeHead(307, { location: `http://localhost:${elsewhere.port}/res/v1/web/search?q=x&count=5` })
          response.end()
        })
        const tool = yield* buildTool({ braveApiKey: Option.some(Redacted.make("brave-secret-key")), braveApiBaseUrl: brave.origin })
        const result = yield* search(tool, { query: "x", count: 5 })
        assert.isFalse(result.success)
        assert.strictEqual(
          result.message,
          "Web search for text results is unavailable right now (DuckDuckGo: unreachable). Tell the user the search failed; do not invent results."
        )
        assert.strictEqual(brave.requests[0]?.headers["x-subscription-token"], "brave-secret-key")
        assert.deepStrictEqual(elsewhere.requests, [], "the redirect target was never asked")
        assert.strictEqual(elsewhere.connections(), 0)
      })
    )

    it.effect("the same refusal is what the model reads when Brave is the only engine that failed", () =>
      Effect.gen(function* () {
        const elsewhere = yield* pageServer((_request, response) => response.end("{}"))
        const brave = yield* pageServer((_request, response) => {
          response.writeHead(302, { location: `http://localhost:${elsewhere.port}/steal` })
          response.end()
        })
        // Images: only Brave serves them here, so its failure is the one reported.
        const tool = yield* buildTool({ braveApiKey: Option.some(Redacted.make("brave-secret-key")), braveApiBaseUrl: brave.origin })
        const result = yield* search(tool, { query: "x", category: "image" })
        assert.strictEqual(result.error, "Brave Search: redirected to another host (not followed)")
        assert.include(result.detail ?? "", `to http://localhost:${elsewhere.port}, not followed`)
        assert.strictEqual(elsewhere.connections(), 0)
      })
    )

    it.effect("a redirect on the same host is followed by hand with the key kept", () =>
      Effect.gen(function* () {
        const real = yield* fakeBrave({ apiKey: "brave-secret-key" })
        const front = yield* pageServer((request, response) => {
          // Same host (127.0.0.1), another port: the proxy in front of the API moved it.
          response.writeHead(308, { location: `http://127.0.0.1:${real.port}${request.url ?? "/"}` })
          response.end()
        })
        const tool = yield* buildTool({ braveApiKey: Option.some(Redacted.make("brave-secret-key")), braveApiBaseUrl: front.origin })
        const result = yield* search(tool, { query: "kept", count: 2 })
        assert.isTrue(result.success, result.message)
        assert.strictEqual(dataOf(result.data).engine, "Brave Search")
        assert.strictEqual(real.requests[0]?.headers["x-subscription-token"], "brave-secret-key")
      })
    )

    it.effect("SearXNG redirected elsewhere is not followed either; endless same-host redirects stop at 3", () =>
      Effect.gen(function* () {
        const elsewhere = yield* pageServer((_request, response) => response.end("{}"))
        const away = yield* pageServer((_request, response) => {
          response.writeHead(301, { location: `http://localhost:${elsewhere.port}/search` })
          response.end()
        })
        const moved = yield* search(yield* buildTool({ searxngBaseUrl: Option.some(away.origin) }), { query: "x", category: "papers" })
        assert.strictEqual(moved.error, "SearXNG: redirected to another host (not followed)")
        assert.strictEqual(elsewhere.connections(), 0)
        const loop = yield* pageServer((request, response) => {
          response.writeHead(302, { location: request.url ?? "/" })
          response.end()
        })
        const looping = yield* search(yield* buildTool({ searxngBaseUrl: Option.some(loop.origin) }), { query: "x", category: "papers" })
        assert.strictEqual(looping.error, "SearXNG: too many redirects")
        assert.strictEqual(loop.requests.length, 4, "the first request and 3 hops")
      })
    )

    it("sameHostHop: the same host, never down from https to http", () => {
      const from = new URL("https://search.example/api")
      assert.isTrue(sameHostHop(from, new URL("https://search.example/v2")))
      assert.isTrue(sameHostHop(new URL("http://search.example/"), new URL("https://search.example/")))
      assert.isFalse(sameHostHop(from, new URL("http://search.example/v2")))
      assert.isFalse(sameHostHop(from, new URL("https://evil.example/")))
      assert.isFalse(sameHostHop(from, new URL("ftp://search.example/")))
    })
  })
})
