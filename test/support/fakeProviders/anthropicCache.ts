/**
 * A Messages endpoint with Anthropic's prompt-cache accounting, as a `FakeLlmServer` handler.
 *
 * The request is flattened in cache order (tools → system → message content blocks); each block
 * is counted at 4 characters a token (its JSON without `cache_control`). For every breakpoint
 * (`cache_control` on a block), the prefix up to and including that block can be cached:
 * - a read is the longest prefix already in the cache, found at a breakpoint or at any block
 *   boundary up to 20 blocks before one (Anthropic's look-back);
 * - a write stores the prefix of each breakpoint after the read; its tokens are those from the
 *   end of the read up to the last breakpoint written;
 * - prefixes shorter than `minCacheableTokens` (1024, Anthropic's floor for Sonnet/Opus) are
 *   never cached; an entry lives 5 minutes after its last use;
 * - `input_tokens` is what comes after the cached part, as Anthropic reports it.
 * More than 4 breakpoints is a 400, with Anthropic's message. Every request's counts are kept
 * in `ledger`, with its cost in base-input units (reads 0.1×, writes 1.25×).
 *
 * The answer of each request comes from `reply` (content events only); the handler wraps them
 * in `message_start` (with the cache usage fields) … `message_delta` / `message_stop`.
 */
import { createHash } from "node:crypto"
import type { AnthropicEvent } from "./anthropic"
import { anthropicStream, messageStop } from "./anthropic"
import type { FakeHandler, FakeResponse, RecordedRequest } from "./FakeLlmServer"
import { jsonResponse } from "./FakeLlmServer"

export const CACHE_READ_PRICE = 0.1
export const CACHE_WRITE_PRICE = 1.25
const LOOK_BACK_BLOCKS = 20
const TTL_MS = 5 * 60_000
const MAX_BREAKPOINTS = 4

export interface CacheAccount {
  /** Every input token of the request. */
  readonly totalInputTokens: number
  /** After the cached part: Anthropic's `input_tokens`. */
  readonly inputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  readonly breakpoints: number
  /** `inputTokens + 0.1 × reads + 1.25 × writes`, in base-input-token units. */
  readonly cost: number
}

export interface AnthropicReply {
  readonly content: ReadonlyArray<AnthropicEvent>
  readonly stopReason: string
  readonly outputTokens: number
}

export interface CachingAnthropic {
  readonly handler: FakeHandler
  readonly ledger: ReadonlyArray<CacheAccount>
}

interface FlatBlock {
  readonly key: string
  readonly tokens: number
  readonly breakpoint: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const withoutCacheControl = (block: Record<string, unknown>): Record<string, unknown> => {
  const { cache_control: _ignored, ...rest } = block
  return rest
}

const countTokens = (text: string): number => Math.ceil(text.length / 4)

const flatten = (body: Record<string, unknown>): ReadonlyArray<FlatBlock> => {
  const blocks: Array<FlatBlock> = []
  const push = (section: string, block: unknown) => {
    const record = isRecord(block) ? block : { type: "text", text: String(block) }
    const json = JSON.stringify(withoutCacheControl(record))
    blocks.push({ key: `${section}:${json}`, tokens: countTokens(json), breakpoint: record.cache_control !== undefined })
  }
  for (const tool of Array.isArray(body.tools) ? body.tools : []) push("tool", tool)
  if (typeof body.system === "string") push("system", { type: "text", text: body.system })
  else for (const block of Array.isArray(body.system) ? body.system : []) push("system", block)
  for (const turn of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(turn)) continue
    const role = String(turn.role)
    const content = turn.content
    if (typeof content === "string") push(role, { type: "text", text: content })
    else for (const block of Array.isArray(content) ? content : []) push(role, block)
  }
  return blocks
}

export const cachingAnthropic = (options: {
  readonly reply: (request: RecordedRequest, index: number) => AnthropicReply
  readonly minCacheableTokens?: number
  readonly now?: () => number
}): CachingAnthropic => {
  const minCacheable = options.minCacheableTokens ?? 1024
  const now = options.now ?? Date.now
  const cache = new Map<string, number>()
  const ledger: Array<CacheAccount> = []

  const account = (body: Record<string, unknown>): CacheAccount | "too many breakpoints" => {
    const blocks = flatten(body)
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []))
    if (breakpoints.length > MAX_BREAKPOINTS) return "too many breakpoints"
    // Prefix hashes and token sums up to and including each block.
    const hashes: Array<string> = []
    const sums: Array<number> = []
    const hash = createHash("sha256").update(String(body.model))
    let sum = 0
    for (const block of blocks) {
      hash.update("\u0000").update(block.key)
      hashes.push(hash.copy().digest("hex"))
      sum += block.tokens
      sums.push(sum)
    }
    const at = now()
    for (const [key, expires] of cache) if (expires <= at) cache.delete(key)

    let readEnd = -1
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - LOOK_BACK_BLOCKS); index--) {
        if (index > readEnd && cache.has(hashes[index]!)) {
          readEnd = index
          break
        }
      }
    }
    if (readEnd >= 0) cache.set(hashes[readEnd]!, at + TTL_MS)
    let writeEnd = readEnd
    for (const breakpoint of breakpoints) {
      if (breakpoint > readEnd && sums[breakpoint]! >= minCacheable) {
        cache.set(hashes[breakpoint]!, at + TTL_MS)
        writeEnd = Math.max(writeEnd, breakpoint)
      }
    }
    const read = readEnd >= 0 ? sums[readEnd]! : 0
    const cachedThrough = writeEnd >= 0 ? sums[writeEnd]! : 0
    const write = cachedThrough - read
    const inputTokens = sum - cachedThrough
    return {
      totalInputTokens: sum,
      inputTokens,
      cacheReadInputTokens: read,
      cacheCreationInputTokens: write,
      breakpoints: breakpoints.length,
      cost: inputTokens + CACHE_READ_PRICE * read + CACHE_WRITE_PRICE * write
    }
  }

  const handler: FakeHandler = (request): FakeResponse => {
    const body = isRecord(request.json) ? request.json : {}
    const counted = account(body)
    if (counted === "too many breakpoints") {
      return jsonResponse(400, {
        type: "error",
        error: { type: "invalid_request_error", message: "A maximum of 4 blocks with cache_control may be provided. Found 5." }
      })
    }
    ledger.push(counted)
    const answer = options.reply(request, ledger.length - 1)
    return anthropicStream([
      {
        type: "message_start",
        message: {
          id: `msg_cache_${ledger.length}`,
          type: "message",
          role: "assistant",
          model: String(body.model),
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: counted.inputTokens,
            cache_creation_input_tokens: counted.cacheCreationInputTokens,
            cache_read_input_tokens: counted.cacheReadInputTokens,
            output_tokens: 1
          }
        }
      },
      ...answer.content,
      {
        type: "message_delta",
        delta: { stop_reason: answer.stopReason, stop_sequence: null },
        usage: { output_tokens: answer.outputTokens }
      },
      messageStop()
    ])
  }

  return { handler, ledger }
}

/** What the same requests would have cost without caching: every input token at the base price. */
export const uncachedCost = (ledger: ReadonlyArray<CacheAccount>): number =>
  ledger.reduce((total, entry) => total + entry.totalInputTokens, 0)

export const cachedCost = (ledger: ReadonlyArray<CacheAccount>): number =>
  ledger.reduce((total, entry) => total + entry.cost, 0)
