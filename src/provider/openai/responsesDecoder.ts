import { Effect, Result, Predicate, Schema } from "effect"
import type { FunctionCall } from "../../domain/FunctionCall"
import type { ProviderError } from "../../domain/ProviderError"
import { type FinishReason, ProviderEvent } from "../../domain/ProviderEvent"
import { makeUsage } from "../../domain/TokenUsage"
import type { Decoder, DecodeStep } from "../decodeWith"
import { endedEarly, fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import type { SseFrame } from "../sse/Sse"
import { allLogs, argumentsOverCap, callsPastCap, exceedsArgumentCap, finalizeArguments, maxCallsPerPass } from "../toolArguments"
import { parseJsonFrame } from "../jsonFrame"

const OptionalString = Schema.optional(Schema.NullOr(Schema.String))
const OptionalNumber = Schema.optional(Schema.NullOr(Schema.Number))

const SummaryPart = Schema.Struct({ type: OptionalString, text: OptionalString })

/** An output item (message, function_call, reasoning, or a kind we do not act on). */
const OutputItem = Schema.Struct({
  id: OptionalString,
  type: Schema.String,
  status: OptionalString,
  call_id: OptionalString,
  name: OptionalString,
  arguments: OptionalString,
  content: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ type: OptionalString, text: OptionalString, refusal: OptionalString })))),
  summary: Schema.optional(Schema.NullOr(Schema.Array(SummaryPart))),
  encrypted_content: OptionalString
})
type OutputItem = typeof OutputItem.Type

const Usage = Schema.Struct({
  input_tokens: OptionalNumber,
  output_tokens: OptionalNumber,
  total_tokens: OptionalNumber,
  input_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: OptionalNumber }))),
  output_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ reasoning_tokens: OptionalNumber })))
})

/** The response object carried by `response.*` lifecycle events (and a whole non-streamed answer). */
const ResponseObject = Schema.Struct({
  id: OptionalString,
  status: OptionalString,
  output: Schema.optional(Schema.NullOr(Schema.Array(OutputItem))),
  usage: Schema.optional(Schema.NullOr(Usage)),
  incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: OptionalString }))),
  error: Schema.optional(Schema.Unknown)
})
type ResponseObject = typeof ResponseObject.Type

/** One streamed event; lenient, since OpenAI adds event types and fields over time. */
const ResponsesEvent = Schema.Struct({
  type: Schema.String,
  item_id: OptionalString,
  output_index: OptionalNumber,
  delta: OptionalString,
  arguments: OptionalString,
  item: Schema.optional(Schema.NullOr(OutputItem)),
  response: Schema.optional(Schema.NullOr(ResponseObject)),
  code: Schema.optional(Schema.Unknown),
  message: OptionalString,
  /** Some servers nest the `error` event's fields under `error`. */
  error: Schema.optional(Schema.Unknown)
})
type ResponsesEvent = typeof ResponsesEvent.Type

const decodeEvent = Schema.decodeUnknownResult(ResponsesEvent)

/** Reasoning items a pass keeps for replay; past the bound they are still shown. */
const MAX_TRACKED_ITEMS = 64
const decodeResponse = Schema.decodeUnknownResult(ResponseObject)

interface CallItem {
  readonly itemId: string | undefined
  /** Where the item sits in the response's output (deltas of a server without item ids name it). */
  readonly outputIndex: number | undefined
  callId: string | undefined
  name: string
  readonly deltas: Array<string>
  deltaChars: number
  /** The whole arguments string from `function_call_arguments.done` / `output_item.done`, when sent. */
  whole: string | undefined
  /** Its arguments outgrew the cap: none are kept, and the call is refused as truncated. */
  overCap: boolean
}

interface ReasoningItem {
  readonly id: string | undefined
  summary: ReadonlyArray<{ readonly type: string; readonly text: string }>
  encrypted: string | undefined
  /** Reasoning text was streamed as deltas (else the done item's summary is shown once). */
  streamed: boolean
}

interface ResponsesDecoderOptions {
  readonly provider: string
  /**
   * `BOT_JSON_REPAIR_MAX_CHARS`: the longest argument payload one call may stream (past it the
   * stream stops and the call is refused as truncated), and the longest cut one that is repaired.
   */
  readonly maxRepairChars: number
}

interface ResponsesDecoder extends Decoder<SseFrame, ProviderEvent, ProviderError> {
  /** Applies a whole response object (a server that ignored `stream: true`). */
  readonly pushResponse: (response: ResponseObject) => DecodeStep<ProviderEvent, ProviderError>
}

/**
 * Decodes Responses API SSE events into provider events:
 * - `response.output_text.delta` (and `refusal.delta`) ⇒ text as it comes;
 * - `response.reasoning_summary_text.delta` / `response.reasoning_text.delta` ⇒ reasoning for
 *   the thought log; each reasoning item (`output_item.done`) is kept, and those the server
 *   returned encrypted are put on the call for replay; an item without content is dropped;
 * - function-call arguments are accumulated per item id (`function_call_arguments.delta`, the
 *   whole string of `.done` wins; deltas of parallel calls may interleave) and every call of the
 *   pass is emitted as its own `ToolCall`, in output order, once the response ends, after the
 *   usage, so the loop can stop reading once it has them; the pass's encrypted reasoning goes on
 *   its first call;
 * - `response.completed` ⇒ `stop` (`tool_calls` with a call); `response.incomplete` with
 *   `max_output_tokens` ⇒ `length` (a cut call's arguments are repaired and flagged as truncated),
 *   with `content_filter` ⇒ `content_filter`; `response.failed` and `error` ⇒ a typed
 *   ProviderError through the shared table (rate limits rotate the key);
 * - the body closing before a terminal event is a `Network` error; a data line that is not
 *   JSON, or JSON without a `type`, is `InvalidResponse`; unknown event types are ignored.
 */
export const makeResponsesDecoder = (options: ResponsesDecoderOptions): ResponsesDecoder => {
  const calls = new Map<string, CallItem>()
  let callsOverflowed = false
  const reasoning = new Map<string, ReasoningItem>()
  const reasoningOrder: Array<ReasoningItem> = []
  let sawText = false
  let sawFrames = false
  let finished = false
  let done = false
  const keepAlive = ProviderEvent.KeepAlive()

  const callAt = (outputIndex: number | undefined): CallItem | undefined => {
    if (outputIndex !== undefined) for (const call of calls.values()) if (call.outputIndex === outputIndex) return call
    return undefined
  }

  const callFor = (itemId: string | undefined, outputIndex: number | undefined): CallItem | undefined => {
    if (itemId !== undefined) return calls.get(itemId)
    // A server without item ids: the call at that output index, or the only call there is.
    return callAt(outputIndex) ?? (calls.size === 1 ? [...calls.values()][0] : undefined)
  }

  const addCall = (item: OutputItem, outputIndex: number | undefined): CallItem | undefined => {
    const existing = item.id ? calls.get(item.id) : callAt(outputIndex)
    if (existing !== undefined) return existing
    if (calls.size >= maxCallsPerPass) {
      callsOverflowed = true
      return undefined
    }
    const call: CallItem = {
      itemId: item.id ?? undefined,
      outputIndex,
      callId: item.call_id ?? undefined,
      name: item.name ?? "",
      deltas: [],
      deltaChars: 0,
      whole: undefined,
      overCap: false
    }
    calls.set(item.id ?? `#${calls.size}`, call)
    return call
  }

  const reasoningFor = (id: string | undefined): ReasoningItem => {
    const key = id ?? `#${reasoningOrder.length}`
    const existing = reasoning.get(key)
    if (existing !== undefined) return existing
    // Past the bound, reasoning is still shown but no longer kept for replay.
    if (reasoningOrder.length >= MAX_TRACKED_ITEMS) return { id: undefined, summary: [], encrypted: undefined, streamed: false }
    const item: ReasoningItem = { id: id ?? undefined, summary: [], encrypted: undefined, streamed: false }
    reasoning.set(key, item)
    reasoningOrder.push(item)
    return item
  }

  /** Takes what a finished item says: a call's name and whole arguments, a reasoning item's summary and encryption. */
  const absorbItem = (item: OutputItem, outputIndex: number | undefined, out: Array<ProviderEvent>, final: boolean) => {
    if (item.type === "function_call") {
      const call = addCall(item, outputIndex)
      if (call === undefined) return
      if (item.call_id) call.callId = item.call_id
      if (item.name) call.name = item.name
      if (final && typeof item.arguments === "string" && item.arguments.length > 0) {
        // Arrived whole (within the event size bound), but past the cap it is still refused.
        if (exceedsArgumentCap(0, item.arguments, options.maxRepairChars)) call.overCap = true
        else call.whole = item.arguments
      }
      return
    }
    if (item.type === "reasoning") {
      const kept = reasoningFor(item.id ?? undefined)
      const summary = (item.summary ?? []).flatMap((part) =>
        typeof part.text === "string" && part.text.length > 0 ? [{ type: part.type ?? "summary_text", text: part.text }] : []
      )
      if (final) {
        if (summary.length > 0) kept.summary = summary
        if (item.encrypted_content) kept.encrypted = item.encrypted_content
        const text = summary.map((part) => part.text).join("\n\n")
        if (!kept.streamed && text.length > 0) out.push(ProviderEvent.ReasoningDelta({ text }))
        kept.streamed = true
      }
      return
    }
    if (item.type === "message" && final && !sawText) {
      // A message that came whole (no deltas streamed): its text is the answer.
      for (const part of item.content ?? []) {
        const text = part.text ?? part.refusal
        if (typeof text === "string" && text.length > 0) {
          sawText = true
          out.push(ProviderEvent.TextDelta({ text }))
        }
      }
    }
  }

  const replayableReasoning = () =>
    reasoningOrder.flatMap((item) =>
      item.encrypted === undefined
        ? []
        : [{ type: "reasoning", ...(item.id === undefined ? {} : { id: item.id }), summary: item.summary, encrypted_content: item.encrypted }]
    )

  /** Emits every call of the pass, in output order, the pass's reasoning on the first. */
  const finalizeCalls = (out: Array<ProviderEvent>, outputCut: boolean): Effect.Effect<void> | undefined => {
    const logs: Array<Effect.Effect<void>> = []
    let first = true
    for (const call of calls.values()) {
      const name = call.name.trim()
      if (name.length === 0) {
        logs.push(Effect.logWarning("dropping a streamed function call that never received a name").pipe(
          Effect.annotateLogs({ adapter: options.provider })
        ))
        continue
      }
      const { log, result } = call.overCap
        ? argumentsOverCap({ adapter: options.provider, toolName: name, maxChars: options.maxRepairChars })
        : finalizeArguments(call.whole ?? call.deltas.join(""), { adapter: options.provider, toolName: name, maxRepairChars: options.maxRepairChars, outputCut })
      if (log) logs.push(log)
      const replay = first ? replayableReasoning() : []
      first = false
      const functionCall: FunctionCall = {
        name,
        args: result.args,
        ...(result.truncated ? { argumentsTruncated: true } : {}),
        ...(call.callId === undefined ? {} : { id: call.callId }),
        ...(replay.length === 0 ? {} : { reasoningDetails: replay })
      }
      out.push(ProviderEvent.ToolCall({ call: functionCall }))
    }
    calls.clear()
    if (callsOverflowed) logs.push(callsPastCap(options.provider))
    return allLogs(logs)
  }

  /** A terminal `response.completed` / `response.incomplete`: usage, the call, the finish. */
  const finish = (response: ResponseObject | undefined, reason: FinishReason, out: Array<ProviderEvent>) => {
    finished = true
    done = true
    for (const [outputIndex, item] of (response?.output ?? []).entries()) absorbItem(item, outputIndex, out, true)
    const usage = response?.usage
    if (usage) {
      out.push(ProviderEvent.Usage({
        usage: makeUsage({
          inputTokens: usage.input_tokens ?? 0,
          outputTokens: usage.output_tokens ?? 0,
          totalTokens: usage.total_tokens,
          cachedInputTokens: usage.input_tokens_details?.cached_tokens,
          reasoningTokens: usage.output_tokens_details?.reasoning_tokens
        })
      }))
    }
    const log = finalizeCalls(out, reason === "length" || reason === "content_filter")
    const emitted = out.some((event) => event._tag === "ToolCall")
    out.push(ProviderEvent.Finish({ reason: reason === "stop" && emitted ? "tool_calls" : reason }))
    return log
  }

  /**
   * A call's arguments outgrew the cap: every call goes out now, as the output was cut there
   * (that one refused as truncated), and nothing more is read.
   */
  const cutAtArgumentCap = (call: CallItem, out: Array<ProviderEvent>): Effect.Effect<void> | undefined => {
    call.deltas.length = 0
    call.whole = undefined
    call.overCap = true
    finished = true
    done = true
    const log = finalizeCalls(out, true)
    out.push(ProviderEvent.Finish({ reason: "length" }))
    return log
  }

  const incompleteReason = (response: ResponseObject | undefined): FinishReason => {
    const reason = response?.incomplete_details?.reason
    return reason === "content_filter" ? "content_filter" : reason === "max_output_tokens" ? "length" : "other"
  }

  const apply = (event: ResponsesEvent, out: Array<ProviderEvent>): Effect.Effect<void, ProviderError> | undefined => {
    switch (event.type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (event.delta) {
          sawText = true
          out.push(ProviderEvent.TextDelta({ text: event.delta }))
        }
        return undefined
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (event.delta) {
          reasoningFor(event.item_id ?? undefined).streamed = true
          out.push(ProviderEvent.ReasoningDelta({ text: event.delta }))
        }
        return undefined
      case "response.output_item.added":
        if (event.item) absorbItem(event.item, event.output_index ?? undefined, out, false)
        return undefined
      case "response.output_item.done":
        if (event.item) absorbItem(event.item, event.output_index ?? undefined, out, true)
        return undefined
      case "response.function_call_arguments.delta": {
        const call = callFor(event.item_id ?? undefined, event.output_index ?? undefined)
        if (call === undefined || !event.delta) return undefined
        if (exceedsArgumentCap(call.deltaChars, event.delta, options.maxRepairChars)) return cutAtArgumentCap(call, out)
        call.deltas.push(event.delta)
        call.deltaChars += event.delta.length
        return undefined
      }
      case "response.function_call_arguments.done": {
        const call = callFor(event.item_id ?? undefined, event.output_index ?? undefined)
        if (call === undefined || typeof event.arguments !== "string" || event.arguments.length === 0) return undefined
        if (exceedsArgumentCap(0, event.arguments, options.maxRepairChars)) return cutAtArgumentCap(call, out)
        call.whole = event.arguments
        return undefined
      }
      case "response.completed":
        return finish(event.response ?? undefined, "stop", out)
      case "response.incomplete":
        return finish(event.response ?? undefined, incompleteReason(event.response ?? undefined), out)
      case "response.failed": {
        done = true
        const error = event.response?.error
        return Effect.fail(fromStreamErrorPayload(options.provider, { error: error ?? { message: "the response failed without an error object" } }))
      }
      case "error":
        done = true
        return Effect.fail(fromStreamErrorPayload(
          options.provider,
          { error: typeof event.error === "object" && event.error !== null ? event.error : { code: event.code, message: event.message } }
        ))
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        // Proof the request is alive, not content: a keep-alive for the watchdog's bookkeeping.
        out.push(keepAlive)
        return undefined
      default:
        // content_part, *.done text events, annotations and event types added later.
        return undefined
    }
  }

  const step = (out: Array<ProviderEvent>, effects: Array<Effect.Effect<void, ProviderError>>): DecodeStep<ProviderEvent, ProviderError> => ({
    out,
    then: effects.length === 0 ? undefined : effects.length === 1 ? effects[0] : Effect.all(effects, { discard: true }),
    done
  })

  const push = (frames: Iterable<SseFrame>): DecodeStep<ProviderEvent, ProviderError> => {
    const out: Array<ProviderEvent> = []
    const effects: Array<Effect.Effect<void, ProviderError>> = []
    for (const frame of frames) {
      sawFrames = true
      if (frame._tag === "Comment") {
        out.push(keepAlive)
        continue
      }
      const parsed = parseJsonFrame(frame.data)
      if (!parsed.ok) {
        effects.push(Effect.fail(invalidResponse(options.provider, `an event whose data is not JSON: ${frame.data.slice(0, 200)}`)))
        done = true
        break
      }
      // The type is in the payload; the SSE `event:` name repeats it (and stands in when it is missing).
      const value = typeof parsed.value === "object" && parsed.value !== null && !("type" in parsed.value) && frame.event !== "message"
        ? { ...parsed.value, type: frame.event }
        : parsed.value
      const decoded = decodeEvent(value)
      if (Result.isFailure(decoded)) {
        effects.push(Effect.fail(invalidResponse(options.provider, `an event of unexpected shape: ${frame.data.slice(0, 200)}`)))
        done = true
        break
      }
      const after = apply(decoded.success, out)
      if (after) effects.push(after)
      if (done) break
    }
    return step(out, effects)
  }

  return {
    push,
    pushResponse: (response) => {
      sawFrames = true
      const out: Array<ProviderEvent> = []
      if (response.status === "failed" || (response.error !== undefined && response.error !== null)) {
        done = true
        return { out, then: Effect.fail(fromStreamErrorPayload(options.provider, { error: response.error ?? {} })) }
      }
      const after = finish(response, response.status === "incomplete" ? incompleteReason(response) : "stop", out)
      return step(out, after === undefined ? [] : [after])
    },
    end: () => (done || finished ? { out: [] } : { out: [], then: Effect.fail(endedEarly(options.provider, sawFrames)) })
  }
}

/** Events for a whole response object from a server that ignored `stream: true`. */
export const wholeResponseEvents = (value: unknown, options: ResponsesDecoderOptions): DecodeStep<ProviderEvent, ProviderError> => {
  if (Predicate.isObject(value) && "error" in value && !("output" in value)) {
    return { out: [], then: Effect.fail(fromStreamErrorPayload(options.provider, value)) }
  }
  const decoded = decodeResponse(value)
  if (Result.isFailure(decoded)) return { out: [], then: Effect.fail(invalidResponse(options.provider, "a JSON response of unexpected shape")) }
  return makeResponsesDecoder(options).pushResponse(decoded.success)
}
