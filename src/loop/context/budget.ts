import type { CompactionMode } from "../../config/ContextConfig"
import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../../provider/GenerationRequest"
import { toolResultText } from "../../provider/toolReplay"
import { entriesOf, type Exchange } from "./exchanges"
import {
  callTokens,
  declarationTokens,
  declarationUpperBound,
  entryUpperBound,
  MESSAGE_OVERHEAD,
  messageTokens,
  messageUpperBound,
  resultTokens,
  textTokens
} from "./tokenEstimate"

/**
 * The context budget: one request in, the same request cut to fit the prompt budget out. Pure
 * (no effect, no clock): the items and the budget decide everything. The rules, in the order they
 * apply, each only while the request is still over the budget (see docs/architecture.md,
 * "Context budget"):
 *
 * 1. older tool results of the turn are elided to a short head and tail, oldest first, with a
 *    marker saying how much was left out and that the tool may be called again;
 * 2. the oldest channel-history messages go: their images first, then the messages;
 * 3. when what is left still cannot fit, the oldest tool exchanges go whole (or, with
 *    `summarize`, are replaced by a summary the caller has the model write);
 * 4. the newest tool result is cut to what fits, with a marker;
 * 5. the message being answered is cut to what fits (its start and end kept), with a marker.
 *
 * Never touched: the system prompt (persona), the tool declarations, system-role items
 * (instructions, memory), the message being answered (only cut), the items after it (this
 * turn's own), the newest exchange (only cut). An exchange is kept, shortened or left out
 * whole: no call is ever separated from its result. When anything was changed, a note at the
 * end of the messages tells the model what was left out.
 */

export interface BudgetInput {
  readonly request: GenerationRequest
  /** The request's history as exchanges (`exchangesOf(request.functionHistory)`). */
  readonly exchanges: ReadonlyArray<Exchange>
  /** Index in `request.messages` of the message being answered; -1 when none is known. */
  readonly question: number
  /** Raw estimated tokens the prompt may take (the window less output, margin and calibration). */
  readonly limit: number
  readonly compaction: CompactionMode
  /** A summary that replaces the turn's first `covers` exchanges (summarize compaction). */
  readonly summary?: { readonly covers: number; readonly text: string } | undefined
}

interface CutReport {
  readonly keptChars: number
  readonly totalChars: number
}

export interface BudgetOutcome {
  /** The request to send: the input request itself when it already fit. */
  readonly request: GenerationRequest
  /** Raw estimated tokens of the input request and of the returned one. */
  readonly originalTokens: number
  readonly tokens: number
  /** False when even every rule could not bring it under the limit (it is sent anyway). */
  readonly fits: boolean
  /** False when the request was under the limit by its characters alone: `tokens` is that bound, not a count. */
  readonly counted: boolean
  /** Older results shown as head and tail (the original entries). */
  readonly elidedResults: ReadonlyArray<ToolHistoryEntry>
  /** History messages whose images were left out, and history messages left out (the originals). */
  readonly droppedImages: ReadonlyArray<ChatMessage>
  readonly droppedMessages: ReadonlyArray<ChatMessage>
  /** Oldest exchanges left out whole (not counting those a given summary covers). */
  readonly droppedExchanges: ReadonlyArray<Exchange>
  /** With `summarize`: how many of the turn's first exchanges a summary should cover for the request to fit. */
  readonly wantsSummary: number | undefined
  readonly cutResult: CutReport | undefined
  readonly cutQuestion: CutReport | undefined
}

/** The request sent as it is: nothing elided, dropped or cut. */
const unchangedOutcome = (request: GenerationRequest, tokens: number, counted: boolean): BudgetOutcome => ({
  request,
  originalTokens: tokens,
  tokens,
  fits: true,
  counted,
  elidedResults: [],
  droppedImages: [],
  droppedMessages: [],
  droppedExchanges: [],
  wantsSummary: undefined,
  cutResult: undefined,
  cutQuestion: undefined
})

/** What an elided result keeps: its first and last characters. */
export const ELIDED_HEAD_CHARS = 700
export const ELIDED_TAIL_CHARS = 300
/** Results not much longer than what elision keeps are left as they are. */
const ELIDE_MIN_CHARS = ELIDED_HEAD_CHARS + ELIDED_TAIL_CHARS + 400
/** Room kept for the note that tells the model what was left out. */
export const NOTE_TOKENS = 120
/** Room kept for the marker a cut adds to a result or a message. */
const MARKER_TOKENS = 60
/** Below this share of the budget the newest result and the question are cut only once older exchanges are gone. */
const PROTECTED_SHARE = 0.25
/** A message being answered keeps at least this much of its text. */
const MIN_QUESTION_CHARS = 200

const thousands = (value: number) => value.toLocaleString("en-US")

/** The marker inside an elided result. */
const elisionMarker = (tool: string, omitted: number, total: number): string =>
  `\n\n[… ${thousands(omitted)} of ${thousands(total)} characters of this ${tool} result were left out to fit the model's context window. Call ${tool} again if you need them. …]\n\n`

/** The marker at the end of a cut newest result. */
const cutResultMarker = (tool: string, cut: number, total: number): string =>
  `\n\n[… the rest of this result (${thousands(cut)} of ${thousands(total)} characters) was cut to fit the model's context window. Call ${tool} again with narrower arguments to read more. …]`

/** The marker inside a cut message (its start and end are kept). */
const cutMessageMarker = (cut: number, total: number): string =>
  `\n\n[… ${thousands(cut)} of ${thousands(total)} characters of this message were left out: it is longer than the model's context window allows. …]\n\n`

const withResult = (entry: ToolHistoryEntry, text: string): ToolHistoryEntry => {
  // A shortened result carries no images: they belonged to the whole result.
  const { imageMetadata: _images, ...rest } = entry
  return { ...rest, functionResponse: { name: entry.functionResponse.name, response: { result: text } } }
}

/** Elided forms are memoised on the original, so an old result is the same object on every pass. */
const elidedForms = new WeakMap<ToolHistoryEntry, ToolHistoryEntry>()

/** An older result as head and tail with a marker; undefined when it is too short to be worth it. */
export const elided = (entry: ToolHistoryEntry): ToolHistoryEntry | undefined => {
  const known = elidedForms.get(entry)
  if (known !== undefined) return known
  const text = toolResultText(entry)
  if (text.length <= ELIDE_MIN_CHARS) return undefined
  const omitted = text.length - ELIDED_HEAD_CHARS - ELIDED_TAIL_CHARS
  const form = withResult(
    entry,
    text.slice(0, ELIDED_HEAD_CHARS) + elisionMarker(entry.functionCall.name, omitted, text.length) + text.slice(-ELIDED_TAIL_CHARS)
  )
  elidedForms.set(entry, form)
  return form
}

const withoutImages = new WeakMap<ChatMessage, ChatMessage>()

const imageless = (message: ChatMessage): ChatMessage => {
  const known = withoutImages.get(message)
  if (known !== undefined) return known
  const { images: _images, ...rest } = message
  withoutImages.set(message, rest)
  return rest
}

const exchangeTokens = (exchange: Exchange, results: (entry: ToolHistoryEntry) => number = resultTokens) =>
  exchange.entries.reduce((total, entry) => total + callTokens(entry) + results(entry), 0)

const exchangeResultTokens = (exchange: Exchange) => exchange.entries.reduce((total, entry) => total + resultTokens(entry), 0)

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/** The note that tells the model what the request leaves out. */
const contextNote = (facts: {
  readonly elided: number
  readonly droppedExchanges: ReadonlyArray<Exchange>
  readonly summarized: number
  readonly droppedMessages: number
  readonly droppedImages: number
  readonly cutResult: boolean
  readonly cutQuestion: boolean
}): string => {
  const parts: Array<string> = []
  if (facts.summarized > 0) parts.push(`${plural(facts.summarized, "earlier tool call", "earlier tool calls")} of this turn are replaced by the summary above`)
  if (facts.droppedExchanges.length > 0) {
    const names = [...new Set(facts.droppedExchanges.flatMap((exchange) => exchange.entries.map((entry) => entry.functionCall.name)))]
    const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? ", …" : "")
    parts.push(`${plural(facts.droppedExchanges.length, "earlier tool call", "earlier tool calls")} of this turn were left out (${shown})`)
  }
  if (facts.elided > 0) parts.push(plural(facts.elided, "earlier tool result shows only its start and end", "earlier tool results show only their start and end"))
  if (facts.droppedMessages > 0) parts.push(`${plural(facts.droppedMessages, "older channel message was", "older channel messages were")} left out`)
  if (facts.droppedImages > 0) parts.push(`the images of ${plural(facts.droppedImages, "older message were", "older messages were")} left out`)
  if (facts.cutResult) parts.push("the newest tool result was cut")
  if (facts.cutQuestion) parts.push("the user's message was cut")
  return `[Context note: to fit the model's context window, ${parts.join("; ")}. Call a tool again if you need a result in full.]`
}

/** The message that carries a summary of the turn's first exchanges. */
const summaryMessage = (covers: number, text: string): ChatMessage => ({
  role: "system",
  content: `[Summary of the first ${plural(covers, "tool call", "tool calls")} of this turn (left out to fit the model's context window):]\n${text}`
})

/** Cuts a text to `keep` characters: the start, a marker naming what was cut, the end. */
const cutMiddle = (text: string, keep: number): string => {
  const kept = Math.max(0, Math.min(text.length, keep))
  const head = Math.ceil(kept * 2 / 3)
  const tail = kept - head
  return text.slice(0, head) + cutMessageMarker(text.length - kept, text.length) + (tail > 0 ? text.slice(-tail) : "")
}

/** Characters of `text` that make about `tokens` estimated tokens (its own characters per token). */
const charsFor = (text: string, textCost: number, tokens: number): number =>
  textCost <= 0 ? text.length : Math.max(0, Math.floor(tokens * (text.length / textCost)))

/** At most one token a character: a request whose characters fit the limit fits, uncounted. */
const upperBound = (request: GenerationRequest): number => {
  let bound = request.system.length + MESSAGE_OVERHEAD + (request.assistantPrefill?.length ?? 0) + MESSAGE_OVERHEAD
  for (const tool of request.tools) bound += declarationUpperBound(tool)
  for (const message of request.messages) bound += messageUpperBound(message)
  for (const entry of request.functionHistory) bound += entryUpperBound(entry)
  return bound
}

export const budgetRequest = (input: BudgetInput): BudgetOutcome => {
  const { request } = input
  const bound = input.summary === undefined ? upperBound(request) : Number.POSITIVE_INFINITY
  if (bound <= input.limit) {
    // Not counted: `tokens` is the bound, which the request is known to be under.
    return unchangedOutcome(request, bound, false)
  }
  const covered = Math.min(input.summary?.covers ?? 0, input.exchanges.length)
  const summaryItem = input.summary === undefined || covered === 0 ? undefined : summaryMessage(covered, input.summary.text)
  const messages = request.messages
  const question = input.question >= 0 && input.question < messages.length ? input.question : -1
  const isHistory = (index: number) => (question < 0 || index < question) && messages[index]!.role !== "system"

  // Costs of what never changes: system prompt, tools, prefill, pinned items.
  let fixed = textTokens(request.system) + MESSAGE_OVERHEAD
  for (const tool of request.tools) fixed += declarationTokens(tool)
  if (request.assistantPrefill !== undefined) fixed += textTokens(request.assistantPrefill) + MESSAGE_OVERHEAD
  let history = 0
  messages.forEach((message, index) => {
    if (index === question) return
    if (isHistory(index)) history += messageTokens(message)
    else fixed += messageTokens(message)
  })
  const questionMessage = question < 0 ? undefined : messages[question]
  let questionCost = questionMessage === undefined ? 0 : messageTokens(questionMessage)
  let exchanges = input.exchanges.slice(covered)
  let exchangeCost = exchanges.reduce((total, exchange) => total + exchangeTokens(exchange), 0)
  const summaryCost = summaryItem === undefined ? 0 : messageTokens(summaryItem)
  const fullHistoryCost = input.exchanges.slice(0, covered).reduce((total, exchange) => total + exchangeTokens(exchange), 0)
  const originalTokens = fixed + history + questionCost + exchangeCost + fullHistoryCost

  const total = () => fixed + history + questionCost + exchangeCost + summaryCost
  const unchanged = unchangedOutcome(request, originalTokens, true)
  if (summaryItem === undefined && originalTokens <= input.limit) return unchanged

  const over = () => total() + NOTE_TOKENS - input.limit
  const fits = () => over() <= 0

  // 1. Older results of the turn: head and tail, oldest first.
  const elidedResults: Array<ToolHistoryEntry> = []
  const newest = exchanges.length - 1
  for (let index = 0; index < newest && !fits(); index++) {
    const exchange = exchanges[index]!
    let changed = false
    const entries = exchange.entries.map((entry) => {
      const form = elided(entry)
      if (form === undefined) return entry
      changed = true
      elidedResults.push(entry)
      return form
    })
    if (!changed) continue
    const next: Exchange = { entries }
    exchangeCost += exchangeTokens(next) - exchangeTokens(exchange)
    exchanges = exchanges.map((candidate, at) => (at === index ? next : candidate))
  }

  // 2. The oldest channel history: images first, then whole messages.
  const kept = [...messages]
  const droppedImages: Array<ChatMessage> = []
  const droppedMessages: Array<ChatMessage> = []
  for (let index = 0; index < kept.length && !fits(); index++) {
    const message = kept[index]!
    if (!isHistory(index) || message.images === undefined || message.images.length === 0) continue
    const without = imageless(message)
    history += messageTokens(without) - messageTokens(message)
    kept[index] = without
    droppedImages.push(message)
  }
  const gone = new Set<number>()
  for (let index = 0; index < kept.length && !fits(); index++) {
    if (!isHistory(index)) continue
    history -= messageTokens(kept[index]!)
    gone.add(index)
    droppedMessages.push(messages[index]!)
  }

  // 3. Older exchanges, when the newest result and the question would have to shrink below their protected share.
  const droppedExchanges: Array<Exchange> = []
  const newestExchange = exchanges[exchanges.length - 1]
  const protectedRoom = () => {
    const result = newestExchange === undefined ? 0 : exchangeResultTokens(newestExchange)
    const floor = input.limit * PROTECTED_SHARE
    return (result - Math.min(result, floor)) + (questionCost - Math.min(questionCost, floor))
  }
  while (exchanges.length > 1 && over() > protectedRoom()) {
    const oldest = exchanges[0]!
    exchangeCost -= exchangeTokens(oldest)
    exchanges = exchanges.slice(1)
    droppedExchanges.push(input.exchanges[covered + droppedExchanges.length]!)
  }

  // 4. The newest result: cut to what fits, its entries in proportion to their size.
  let cutResult: CutReport | undefined
  if (!fits() && newestExchange !== undefined) {
    const results = exchangeResultTokens(newestExchange)
    const room = Math.max(0, results - over() - MARKER_TOKENS * newestExchange.entries.length)
    let keptChars = 0
    let totalChars = 0
    const entries = newestExchange.entries.map((entry) => {
      const text = toolResultText(entry)
      const cost = resultTokens(entry)
      const share = results <= 0 ? 0 : (room * cost) / results
      const keep = Math.min(text.length, charsFor(text, cost, share))
      keptChars += keep
      totalChars += text.length
      return keep >= text.length ? entry : withResult(entry, text.slice(0, keep) + cutResultMarker(entry.functionCall.name, text.length - keep, text.length))
    })
    const next: Exchange = { entries }
    exchangeCost += exchangeTokens(next) - exchangeTokens(newestExchange)
    exchanges = [...exchanges.slice(0, -1), next]
    if (keptChars < totalChars) cutResult = { keptChars, totalChars }
  }

  // 5. The message being answered: its start and end kept, the middle cut.
  let cutQuestion: CutReport | undefined
  if (!fits() && questionMessage !== undefined) {
    const text = questionMessage.content
    const textCost = textTokens(text)
    const keep = Math.max(Math.min(text.length, MIN_QUESTION_CHARS), charsFor(text, textCost, Math.max(0, textCost - over() - MARKER_TOKENS)))
    if (keep < text.length) {
      const cut: ChatMessage = { ...questionMessage, content: cutMiddle(text, keep) }
      questionCost += messageTokens(cut) - messageTokens(questionMessage)
      kept[question] = cut
      cutQuestion = { keptChars: keep, totalChars: text.length }
    }
  }

  const note = contextNote({
    elided: elidedResults.length,
    droppedExchanges,
    summarized: summaryItem === undefined ? 0 : covered,
    droppedMessages: droppedMessages.length,
    droppedImages: droppedImages.length,
    cutResult: cutResult !== undefined,
    cutQuestion: cutQuestion !== undefined
  })
  const changedAnything = summaryItem !== undefined || elidedResults.length + droppedImages.length + droppedMessages.length +
        droppedExchanges.length > 0 || cutResult !== undefined || cutQuestion !== undefined
  const noteItem: ChatMessage | undefined = changedAnything ? { role: "system", content: note } : undefined
  const outMessages = [
    ...kept.filter((_, index) => !gone.has(index)),
    ...(summaryItem === undefined ? [] : [summaryItem]),
    ...(noteItem === undefined ? [] : [noteItem])
  ]
  const tokens = total() + (noteItem === undefined ? 0 : messageTokens(noteItem))
  return {
    request: { ...request, messages: outMessages, functionHistory: entriesOf(exchanges) },
    originalTokens,
    tokens,
    fits: tokens <= input.limit,
    counted: true,
    elidedResults,
    droppedImages,
    droppedMessages,
    droppedExchanges,
    wantsSummary: input.compaction === "summarize" && droppedExchanges.length > 0 ? covered + droppedExchanges.length : undefined,
    cutResult,
    cutQuestion
  }
}
