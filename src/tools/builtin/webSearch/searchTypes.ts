import { Data, type Effect } from "effect"
import { decodeEntities } from "../../../fetch/html/entities"

/** The categories web_search can offer. */
export const SEARCH_CATEGORIES = ["text", "image", "video", "news", "papers", "code", "files", "music"] as const
export type SearchCategory = (typeof SEARCH_CATEGORIES)[number]

export const isSearchCategory = (value: string): value is SearchCategory =>
  (SEARCH_CATEGORIES as ReadonlyArray<string>).includes(value)

/** One result as the model sees it: short, no engine noise. Optional fields are omitted when empty. */
export interface SearchHit {
  readonly title: string
  readonly url: string
  readonly snippet?: string
  readonly date?: string
  /** Images: the picture itself (`url` is the page it is on). */
  readonly imageUrl?: string
  readonly source?: string
}

interface SearchRequest {
  readonly query: string
  readonly category: SearchCategory
  readonly count: number
  readonly signal: AbortSignal
}

/**
 * A search backend failed. `failure` is the kind (what the model reads: "unreachable",
 * "timed out", "failed (5xx)"…); `reason` is everything else (a network error, a host, the
 * vendor's words), for the logs and the thought log.
 */
export class SearchEngineError extends Data.TaggedError("SearchEngineError")<{
  readonly engine: string
  readonly failure: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.engine}: ${this.reason}`
  }

  /** `Brave Search: rate limited`: the engine and the kind of failure, nothing internal. */
  get modelText(): string {
    return `${this.engine}: ${this.failure}`
  }
}

/** A search backend: which categories it serves and how to ask it. */
export interface SearchEngine {
  readonly name: string
  readonly categories: ReadonlySet<SearchCategory>
  readonly search: (request: SearchRequest) => Effect.Effect<ReadonlyArray<SearchHit>, SearchEngineError>
}

const SNIPPET_MAX = 300

/** Tags stripped, entities decoded, whitespace collapsed, cut to a snippet's length. */
const cleanText = (text: unknown, max = SNIPPET_MAX): string | undefined => {
  if (typeof text !== "string") return undefined
  const clean = decodeEntities(text.replace(/<[^<>]{0,200}>/g, "")).replace(/\s+/g, " ").trim()
  if (clean === "") return undefined
  return clean.length > max ? `${clean.slice(0, max - 1).trimEnd()}…` : clean
}

/** Builds a hit, dropping empty optional fields and results without a usable http(s) URL. */
export const hit = (fields: {
  readonly title: unknown
  readonly url: unknown
  readonly snippet?: unknown
  readonly date?: unknown
  readonly imageUrl?: unknown
  readonly source?: unknown
}): SearchHit | undefined => {
  if (typeof fields.url !== "string" || !/^https?:\/\//i.test(fields.url)) return undefined
  const title = cleanText(fields.title, 200) ?? fields.url
  const snippet = cleanText(fields.snippet)
  const date = cleanText(fields.date, 40)
  const imageUrl = typeof fields.imageUrl === "string" && /^https?:\/\//i.test(fields.imageUrl) ? fields.imageUrl : undefined
  const source = cleanText(fields.source, 80)
  return {
    title,
    url: fields.url,
    ...(snippet === undefined ? {} : { snippet }),
    ...(date === undefined ? {} : { date }),
    ...(imageUrl === undefined ? {} : { imageUrl }),
    ...(source === undefined ? {} : { source })
  }
}

export const compactHits = (hits: ReadonlyArray<SearchHit | undefined>, count: number): ReadonlyArray<SearchHit> =>
  hits.filter((entry): entry is SearchHit => entry !== undefined).slice(0, count)
