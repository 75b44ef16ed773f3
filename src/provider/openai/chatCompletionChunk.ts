/**
 * The shape of one Chat Completions stream chunk (or a whole completion), checked by hand: the
 * decoder runs for every SSE event of every model call, and a Schema decode allocated about
 * 4 KiB per chunk (ParseResult nodes, an Either, the rebuilt object) where these checks
 * allocate nothing. Same rules as the Struct it replaces: every field optional, `null`
 * accepted, a field of the wrong type rejects the chunk, unknown fields are ignored.
 */
import { Predicate } from "effect"

export interface ToolCallDelta {
  readonly index?: number | null | undefined
  readonly id?: string | null | undefined
  readonly function?: { readonly name?: string | null | undefined; readonly arguments?: string | null | undefined } | null | undefined
}

/** A streamed `delta`, or a whole `message` from a server that ignored `stream: true`. */
interface Delta {
  readonly content?: string | null | undefined
  /** DeepSeek (and vLLM before 0.9) thinking text: replayed with the call. */
  readonly reasoning_content?: string | null | undefined
  /** OpenRouter / vLLM plain reasoning text: shown in the thought log only. */
  readonly reasoning?: string | null | undefined
  /** OpenRouter structured reasoning blocks: replayed with the call. */
  readonly reasoning_details?: ReadonlyArray<unknown> | null | undefined
  readonly tool_calls?: ReadonlyArray<ToolCallDelta> | null | undefined
}

interface Choice {
  readonly index?: number | null | undefined
  readonly delta?: Delta | null | undefined
  readonly message?: Delta | null | undefined
  readonly finish_reason?: string | null | undefined
}

interface Usage {
  readonly prompt_tokens?: number | null | undefined
  readonly completion_tokens?: number | null | undefined
  readonly total_tokens?: number | null | undefined
  /** OpenAI (and DeepSeek-compatible servers): prompt tokens served from the prompt cache. */
  readonly prompt_tokens_details?: { readonly cached_tokens?: number | null | undefined } | null | undefined
  /** DeepSeek's name for the same count. */
  readonly prompt_cache_hit_tokens?: number | null | undefined
  /** Reasoning models: the part of the completion spent on hidden reasoning. */
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number | null | undefined } | null | undefined
}

export interface ChatCompletionChunk {
  readonly choices?: ReadonlyArray<Choice> | null | undefined
  readonly usage?: Usage | null | undefined
  readonly error?: unknown
}

type Fields = Readonly<Record<string, unknown>>

const optionalString = (value: unknown): boolean => value === undefined || value === null || typeof value === "string"
const optionalNumber = (value: unknown): boolean => value === undefined || value === null || typeof value === "number"
const optionalArrayOf = (value: unknown, item: (element: unknown) => boolean): boolean => {
  if (value === undefined || value === null) return true
  if (!Array.isArray(value)) return false
  for (const element of value) if (!item(element)) return false
  return true
}
const optionalObject = (value: unknown, shape: (fields: Fields) => boolean): boolean =>
  value === undefined || value === null || (Predicate.isObject(value) && shape(value))

const isToolCallDelta = (value: unknown): boolean =>
  Predicate.isObject(value) &&
  optionalNumber(value.index) &&
  optionalString(value.id) &&
  optionalObject(value.function, (fn) => optionalString(fn.name) && optionalString(fn.arguments))

const isDelta = (delta: Fields): boolean =>
  optionalString(delta.content) &&
  optionalString(delta.reasoning_content) &&
  optionalString(delta.reasoning) &&
  optionalArrayOf(delta.reasoning_details, () => true) &&
  optionalArrayOf(delta.tool_calls, isToolCallDelta)

const isChoice = (value: unknown): boolean =>
  Predicate.isObject(value) &&
  optionalNumber(value.index) &&
  optionalObject(value.delta, isDelta) &&
  optionalObject(value.message, isDelta) &&
  optionalString(value.finish_reason)

const isUsage = (usage: Fields): boolean =>
  optionalNumber(usage.prompt_tokens) &&
  optionalNumber(usage.completion_tokens) &&
  optionalNumber(usage.total_tokens) &&
  optionalObject(usage.prompt_tokens_details, (details) => optionalNumber(details.cached_tokens)) &&
  optionalNumber(usage.prompt_cache_hit_tokens) &&
  optionalObject(usage.completion_tokens_details, (details) => optionalNumber(details.reasoning_tokens))

/** The chunk, or undefined when its shape is not a Chat Completions chunk. */
export const readChatCompletionChunk = (value: unknown): ChatCompletionChunk | undefined =>
  Predicate.isObject(value) && optionalArrayOf(value.choices, isChoice) && optionalObject(value.usage, isUsage)
    ? (value as ChatCompletionChunk)
    : undefined
