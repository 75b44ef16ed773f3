/**
 * Anthropic prompt caching (`cache_control: {type: "ephemeral"}` breakpoints). A bot resends the
 * same tools, system prompt and growing history on every pass of a tool loop; with breakpoints
 * the prefix up to each one is written to the cache once (1.25× the base input price) and read
 * back on later passes (0.1×). Anthropic caches in the order tools → system → messages and
 * allows at most 4 breakpoints per request; we place at most 3:
 * 1. on the last tool (the tool list is the first thing in the prefix);
 * 2. on the system prompt (tools + system);
 * 3. on the last block of the last stable turn: the newest user turn (the user's message on the
 *    first pass, the newest tool result afterwards). A trailing assistant prefill changes
 *    between attempts, so it stays after the breakpoint. On the next pass the breakpoint moves
 *    to the new tool result; the previous prefix is found by Anthropic's look-back over earlier
 *    block boundaries, read from the cache, and only the new blocks are written.
 */
import { Predicate } from "effect"

/** Anthropic's limit on `cache_control` blocks per request. */
const MAX_CACHE_BREAKPOINTS = 4

const ephemeral = { type: "ephemeral" } as const

type Block = Readonly<Record<string, unknown>>

interface Turn {
  readonly role: string
  readonly content: ReadonlyArray<Block> | string
}

const isTurn = (value: unknown): value is Turn =>
  Predicate.isObject(value) && typeof value.role === "string" && (typeof value.content === "string" || Array.isArray(value.content))

const marked = (block: Block): Block => ({ ...block, cache_control: ephemeral })

const hasBreakpoint = (value: unknown): boolean => Predicate.isObject(value) && value.cache_control !== undefined

/** Counts the breakpoints already in a body (an `extraBody` may bring its own). */
export const countBreakpoints = (body: Readonly<Record<string, unknown>>): number => {
  let count = 0
  if (Array.isArray(body.tools)) count += body.tools.filter(hasBreakpoint).length
  if (Array.isArray(body.system)) count += body.system.filter(hasBreakpoint).length
  if (Array.isArray(body.messages)) {
    for (const turn of body.messages) {
      if (isTurn(turn) && Array.isArray(turn.content)) count += turn.content.filter(hasBreakpoint).length
    }
  }
  return count
}

/** Index of the newest user turn that comes before any trailing assistant prefill. */
const lastStableTurn = (messages: ReadonlyArray<unknown>): number => {
  for (let index = messages.length - 1; index >= 0; index--) {
    const turn = messages[index]
    if (isTurn(turn) && turn.role === "user") return index
  }
  return -1
}

/**
 * Adds the breakpoints to a Messages request body (as `messagesBody` built it): pure, the input
 * is not changed. A part that is absent (no tools, no system prompt) gets no breakpoint, and
 * the total never exceeds Anthropic's 4, counting breakpoints the body already carries.
 */
export const withCacheBreakpoints = (body: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  let budget = MAX_CACHE_BREAKPOINTS - countBreakpoints(body)
  const next: Record<string, unknown> = { ...body }

  const tools = body.tools
  if (budget > 0 && Array.isArray(tools) && tools.length > 0) {
    const last = tools[tools.length - 1]
    if (Predicate.isObject(last) && !hasBreakpoint(last)) {
      next.tools = [...tools.slice(0, -1), marked(last)]
      budget -= 1
    }
  }

  const system = body.system
  if (budget > 0 && typeof system === "string" && system.length > 0) {
    // The system prompt as one text block, so it can carry the breakpoint.
    next.system = [marked({ type: "text", text: system })]
    budget -= 1
  }

  const messages = body.messages
  if (budget > 0 && Array.isArray(messages)) {
    const index = lastStableTurn(messages)
    const turn = messages[index]
    if (isTurn(turn)) {
      const content: ReadonlyArray<Block> = typeof turn.content === "string" ? [{ type: "text", text: turn.content }] : turn.content
      const last = content[content.length - 1]
      if (last !== undefined && !hasBreakpoint(last)) {
        const copy = [...messages]
        copy[index] = { ...turn, content: [...content.slice(0, -1), marked(last)] }
        next.messages = copy
      }
    }
  }
  return next
}
