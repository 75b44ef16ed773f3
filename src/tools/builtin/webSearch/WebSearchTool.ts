import { Effect, Option, Schema } from "effect"
import { SearchConfig, type SearchSettings } from "../../../config/SearchConfig"
import { toolFailure, toolSuccess } from "../../../domain/ToolResult"
import { jsonSchemaOf, makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { braveEngine } from "./braveEngine"
import { duckduckgoEngine } from "./duckduckgoEngine"
import { searxngEngine } from "./searxngEngine"
import { isSearchCategory, SEARCH_CATEGORIES, type SearchCategory, type SearchEngine, type SearchEngineError, type SearchHit } from "./searchTypes"

export const WEB_SEARCH = "web_search"

const DEFAULT_COUNT = 5
const MAX_COUNT = 20

/** The engines in dispatch order: Brave → SearXNG → DuckDuckGo. */
const searchEngines = (settings: SearchSettings): ReadonlyArray<SearchEngine> => [
  ...Option.match(settings.braveApiKey, { onNone: () => [], onSome: (key) => [braveEngine(settings, key)] }),
  ...Option.match(settings.searxngBaseUrl, { onNone: () => [], onSome: (url) => [searxngEngine(settings, url)] }),
  duckduckgoEngine(settings)
]

/** Exactly the categories some configured engine serves, in the canonical order. */
const advertisedCategories = (engines: ReadonlyArray<SearchEngine>): ReadonlyArray<SearchCategory> =>
  SEARCH_CATEGORIES.filter((category) => engines.some((engine) => engine.categories.has(category)))

const backendLabel = (settings: SearchSettings): string => {
  const brave = Option.isSome(settings.braveApiKey)
  const searxng = Option.isSome(settings.searxngBaseUrl)
  return brave && searxng ? "Brave Search + SearXNG" : searxng ? "SearXNG" : brave ? "Brave Search" : "DuckDuckGo"
}

const CATEGORY_HINTS: Readonly<Record<SearchCategory, string>> = {
  text: "web pages",
  image: "images",
  video: "videos",
  news: "news articles",
  papers: "scientific papers",
  code: "code and IT resources",
  files: "downloadable files",
  music: "music"
}

const describeWebSearch = (settings: SearchSettings, categories: ReadonlyArray<SearchCategory>): string => {
  const list = categories.map((category) => `'${category}' (${CATEGORY_HINTS[category]})`).join(", ")
  const which =
    categories.length === 1
      ? `Only the 'text' category is available (${CATEGORY_HINTS.text}).`
      : `Categories: ${list}.`
  return (
    `Search the web (${backendLabel(settings)}) and get a short list of results: title, URL, snippet and date. ` +
    `${which} Use fetch_url on a result's URL to read the page itself.`
  )
}

/** What execution accepts: lenient (unknown category ⇒ text, count floored). */
const WebSearchArgs = Schema.Struct({
  query: Schema.String,
  category: Schema.optional(Schema.String),
  count: Schema.optional(Schema.Number)
})

/** What the model is shown: the category enum narrowed to the backends that exist. */
const declaredParameters = (categories: ReadonlyArray<SearchCategory>) =>
  jsonSchemaOf(
    Schema.Struct({
      query: Schema.String.annotate({ description: "What to search for." }),
      category: Schema.optional(
        Schema.Literals(categories as readonly [SearchCategory, ...Array<SearchCategory>]).annotate({
          description: "Kind of results (default 'text')."
        })
      ),
      count: Schema.optional(
        Schema.Number.annotate({ description: `How many results (default ${DEFAULT_COUNT}, at most ${MAX_COUNT}).` })
      )
    })
  )

/**
 * `web_search`: walks Brave → SearXNG → DuckDuckGo for the category,
 * skipping engines that do not serve it; the first engine with results wins, failures fall
 * through. Results are compact for the model. Outbound requests go to the configured base URLs.
 */
export const webSearchTool: Effect.Effect<Tool, never, SearchConfig> = Effect.gen(function* () {
  const settings = yield* SearchConfig
  const engines = searchEngines(settings)
  const categories = advertisedCategories(engines)
  const description = describeWebSearch(settings, categories)
  const parameters = declaredParameters(categories)
  yield* Effect.logDebug(`web_search: ${engines.map((engine) => engine.name).join(" → ")}; categories ${categories.join(",")}`)

  const execute = (args: typeof WebSearchArgs.Type) =>
    Effect.gen(function* () {
      const context = yield* ToolContext
      const query = args.query.trim()
      if (query === "") return toolFailure("query must be a non-empty string", { message: "web_search needs a non-empty query." })
      const requested = (args.category ?? "text").trim().toLowerCase()
      const category: SearchCategory = isSearchCategory(requested) ? requested : "text"
      const count =
        args.count !== undefined && Number.isFinite(args.count) && args.count > 0
          ? Math.min(Math.max(1, Math.floor(args.count)), MAX_COUNT)
          : DEFAULT_COUNT
      const serving = engines.filter((engine) => engine.categories.has(category))
      let lastError: SearchEngineError | undefined
      let emptyFrom: string | undefined
      for (const engine of serving) {
        const outcome = yield* Effect.result(engine.search({ query, category, count, signal: context.abortSignal }))
        if (outcome._tag === "Failure") {
          lastError = outcome.failure
          yield* Effect.logDebug(`web_search: ${outcome.failure.message}`)
          continue
        }
        if (outcome.success.length === 0) {
          emptyFrom ??= engine.name
          continue
        }
        const results: ReadonlyArray<SearchHit> = outcome.success
        return toolSuccess({ query, category, engine: engine.name, results })
      }
      if (emptyFrom !== undefined) {
        return toolSuccess(
          { query, category, engine: emptyFrom, results: [] },
          { message: `No ${category} results for "${query}".` }
        )
      }
      // The model reads which engine failed and how, never the network error or the vendor's words.
      return toolFailure(lastError?.modelText ?? `No search engine serves the '${category}' category`, {
        message: `Web search for ${category} results is unavailable right now${lastError === undefined ? "" : ` (${lastError.modelText})`}. Tell the user the search failed; do not invent results.`,
        ...(lastError === undefined ? {} : { detail: lastError.message })
      })
    })

  const base = makeTool({
    name: WEB_SEARCH,
    description,
    category: "search",
    parameters: WebSearchArgs,
    requiresFollowUp: true,
    execute
  })
  // Dynamic assembly: the turn's declaration offers only what the backends serve.
  const assembled: Tool = { ...base, description, parameters }
  return {
    ...base,
    description: describeWebSearch(settings, SEARCH_CATEGORIES),
    parameters: declaredParameters(SEARCH_CATEGORIES),
    assembleForContext: () => Effect.succeed(assembled)
  }
})
