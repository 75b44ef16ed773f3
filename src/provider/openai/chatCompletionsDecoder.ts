import { Effect, Predicate } from "effect"
import type { FunctionCall } from "../../domain/FunctionCall"
import type { ProviderError } from "../../domain/ProviderError"
import { type FinishReason, ProviderEvent } from "../../domain/ProviderEvent"
import { makeUsage } from "../../domain/TokenUsage"
import type { Decoder, DecodeStep } from "../decodeWith"
import { endedEarly, fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import type { SseFrame } from "../sse/Sse"
import { allLogs, argumentsOverCap, callsPastCap, exceedsArgumentCap, finalizeArguments, maxCallsPerPass } from "../toolArguments"
import { type ChatCompletionChunk, readChatCompletionChunk, type ToolCallDelta } from "./chatCompletionChunk"
import { parseJsonFrame } from "../jsonFrame"


const finishReasonOf = (raw: string): FinishReason => {
  switch (raw) {
    case "stop":
    case "end_turn":
    case "eos":
      return "stop"
    case "length":
    case "max_tokens":
      return "length"
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_calls"
    case "content_filter":
      return "content_filter"
    default:
      return "other"
  }
}

interface CallSlot {
  /** The `index` the server numbers the call with: calls are emitted in this order. */
  readonly index: number
  id: string | undefined
  name: string
  args: string
  /** Its arguments outgrew the cap: none are kept, and the call is refused as truncated. */
  overCap: boolean
}

type ReasoningDetail = Record<string, unknown>

/** A tool name streamed in pieces stops growing here (no real tool name comes close). */
const MAX_NAME_CHARS = 256

/**
 * OpenRouter streams reasoning blocks in pieces tagged with an `index`: pieces of one block are
 * merged (text fields concatenated, the rest last-wins) so the replay carries whole blocks. A
 * merged field never grows past `maxChars` (an encrypted `data` field shows nothing, so no
 * other cap would see it grow): `undefined` says one would have.
 */
const mergeReasoningDetails = (into: Array<ReasoningDetail>, pieces: ReadonlyArray<unknown>, maxChars: number): string | undefined => {
  let visible = ""
  for (const piece of pieces) {
    if (!Predicate.isObject(piece)) continue
    const text = typeof piece.text === "string" ? piece.text : typeof piece.summary === "string" ? piece.summary : ""
    visible += text
    const index = typeof piece.index === "number" ? piece.index : undefined
    const existing = index === undefined
      ? undefined
      : into.find((detail) => detail.index === index && detail.type === piece.type)
    if (existing === undefined) {
      into.push({ ...piece })
      continue
    }
    for (const [key, value] of Object.entries(piece)) {
      const previous = existing[key]
      const concatenated = (key === "text" || key === "summary" || key === "data") && typeof previous === "string" && typeof value === "string"
      if (concatenated && previous.length + value.length > maxChars) return undefined
      existing[key] = concatenated ? previous + value : value
    }
  }
  return visible
}

interface ChatCompletionsDecoderOptions {
  readonly provider: string
  /**
   * `BOT_JSON_REPAIR_MAX_CHARS`: the longest argument payload one call may stream (past it the
   * stream stops and the call is refused as truncated), and the longest cut one that is repaired.
   */
  readonly maxRepairChars: number
}

interface ChatCompletionsDecoder extends Decoder<SseFrame, ProviderEvent, ProviderError> {
  /** Applies an already decoded chunk (used for a whole, non-streamed completion). */
  readonly pushChunk: (chunk: ChatCompletionChunk) => DecodeStep<ProviderEvent, ProviderError>
}

/**
 * Decodes Chat Completions SSE frames into provider events: text and reasoning deltas as they
 * come; tool-call fragments (names too) accumulated per `index` (deltas of parallel calls may
 * interleave) and, when the choice finishes, every call emitted as its own `ToolCall` in index
 * order, released with the `Finish` when the stream ends, after any usage; exactly one `Finish`.
 * The pass's reasoning (`reasoning_content`, `reasoning_details`) goes on its first call.
 *
 * End of stream: `[DONE]` ends it (a missing finish reason is then `stop`, or `tool_calls` when
 * a call came); a body that closes after a finish reason but without `[DONE]` is accepted; one
 * that closes with neither is a `Network` error (the connection dropped mid-answer: the outer
 * tier retries and continues from the text already shown), and a body with no event at all is
 * `InvalidResponse`. A data line that is not JSON is `InvalidResponse` (content may be lost);
 * JSON of an unknown shape that still fits the chunk schema is ignored.
 */
export const makeChatCompletionsDecoder = (options: ChatCompletionsDecoderOptions): ChatCompletionsDecoder => {
  /** Calls in the order they started; `byIndex` points at the call each index currently extends. */
  const calls: Array<CallSlot> = []
  const byIndex = new Map<number, CallSlot>()
  const reasoningContent: Array<string> = []
  const reasoningDetails: Array<ReasoningDetail> = []
  let callEmitted = false
  /** The pass started more calls than it may make (logged once, with the calls). */
  let callsOverflowed = false
  let finished = false
  let sawFrames = false
  let done = false

  /** The call a slot holds, with the log to run for it; no call for a slot that never got a name. */
  const toolCallOf = (slot: CallSlot, outputCut: boolean): { readonly call?: FunctionCall; readonly log: Effect.Effect<void> | undefined } => {
    const name = slot.name.trim()
    if (name.length === 0) {
      return {
        log: Effect.logWarning("dropping a streamed tool call that never received a name").pipe(
          Effect.annotateLogs({ adapter: options.provider, argument_chars: slot.args.length })
        )
      }
    }
    const { log, result } = slot.overCap
      ? argumentsOverCap({ adapter: options.provider, toolName: name, maxChars: options.maxRepairChars })
      : finalizeArguments(slot.args, {
        adapter: options.provider,
        toolName: name,
        maxRepairChars: options.maxRepairChars,
        outputCut
      })
    // The pass's reasoning is replayed once, with its first call.
    const first = !callEmitted
    const call: FunctionCall = {
      name,
      args: result.args,
      ...(result.truncated ? { argumentsTruncated: true } : {}),
      ...(slot.id === undefined ? {} : { id: slot.id }),
      ...(!first || reasoningContent.length === 0 ? {} : { reasoningContent: reasoningContent.join("") }),
      ...(!first || reasoningDetails.length === 0 ? {} : { reasoningDetails: reasoningDetails.map((detail) => ({ ...detail })) })
    }
    return { call, log }
  }

  /** Emits every call of the pass, in index order (once: the accumulator is cleared). */
  const finalizeCalls = (out: Array<ProviderEvent>, outputCut: boolean): Effect.Effect<void> | undefined => {
    // A stable sort: calls a server numbered alike keep the order they started in.
    const pending = calls.length > 1 ? [...calls].sort((a, b) => a.index - b.index) : [...calls]
    calls.length = 0
    byIndex.clear()
    const logs: Array<Effect.Effect<void>> = []
    for (const slot of pending) {
      const { call, log } = toolCallOf(slot, outputCut)
      if (log) logs.push(log)
      if (call === undefined) continue
      callEmitted = true
      out.push(ProviderEvent.ToolCall({ call }))
    }
    if (callsOverflowed) logs.push(callsPastCap(options.provider))
    return allLogs(logs)
  }

  /**
   * A finished pass with a call holds the ToolCall and Finish until the stream ends (`[DONE]`
   * or the body closes): the usage chunk comes after the finish, and the loop may stop reading
   * once it has the calls. A text pass is read to the end anyway, so this adds no new way to hang.
   */
  let held: Array<ProviderEvent> = []

  const finish = (out: Array<ProviderEvent>, reason: FinishReason): Effect.Effect<void> | undefined => {
    if (finished) return undefined
    finished = true
    const tail: Array<ProviderEvent> = []
    const log = finalizeCalls(tail, reason === "length" || reason === "content_filter")
    tail.push(ProviderEvent.Finish({ reason: reason === "stop" && callEmitted ? "tool_calls" : reason }))
    if (callEmitted) held = tail
    else out.push(...tail)
    return log
  }

  const release = (out: Array<ProviderEvent>) => {
    out.push(...held)
    held = []
  }

  /** Absorbs call fragments; true when a call's arguments outgrew the cap (nothing more is read). */
  const absorbToolCalls = (deltas: ReadonlyArray<ToolCallDelta>): boolean => {
    for (const delta of deltas) {
      const index = delta.index ?? 0
      let slot = byIndex.get(index)
      // A server that numbers every call 0 still starts a new call with a new id.
      if (slot === undefined || (delta.id && slot.id && delta.id !== slot.id && slot.name.length > 0)) {
        if (calls.length >= maxCallsPerPass) {
          callsOverflowed = true
          continue
        }
        slot = { index, id: undefined, name: "", args: "", overCap: false }
        byIndex.set(index, slot)
        calls.push(slot)
      }
      if (delta.id) slot.id = delta.id
      const fn = delta.function
      if (fn?.name && slot.name.length < MAX_NAME_CHARS) slot.name += fn.name
      if (fn?.arguments) {
        if (exceedsArgumentCap(slot.args.length, fn.arguments, options.maxRepairChars)) {
          slot.args = ""
          slot.overCap = true
          return true
        }
        slot.args += fn.arguments
      }
    }
    return false
  }

  /**
   * A call outgrew the argument cap: every call of the pass is emitted now, as the output was
   * cut there (that call refused as truncated, the others as their arguments stand), and reading stops.
   */
  const cutAtArgumentCap = (out: Array<ProviderEvent>): Effect.Effect<void> | undefined => {
    finished = true
    done = true
    const log = finalizeCalls(out, true)
    out.push(ProviderEvent.Finish({ reason: "length" }))
    return log
  }

  const keepAlive = ProviderEvent.KeepAlive()

  /** Applies one decoded chunk; returns the log or failure to run after its events. */
  const applyChunk = (chunk: ChatCompletionChunk, out: Array<ProviderEvent>): Effect.Effect<void, ProviderError> | undefined => {
    if (chunk.error !== undefined && chunk.error !== null) {
      done = true
      return Effect.fail(fromStreamErrorPayload(options.provider, chunk))
    }
    let after: Effect.Effect<void> | undefined
    const choices = chunk.choices
    const choice = choices === undefined || choices === null || choices.length === 0
      ? undefined
      : choices.length === 1
      ? choices[0]
      : choices.find((candidate) => (candidate.index ?? 0) === 0) ?? choices[0]
    if (choice !== undefined) {
      const delta = choice.delta
      if (delta) {
        if (delta.reasoning_content) {
          reasoningContent.push(delta.reasoning_content)
          out.push(ProviderEvent.ReasoningDelta({ text: delta.reasoning_content }))
        }
        const detailsText = delta.reasoning_details ? mergeReasoningDetails(reasoningDetails, delta.reasoning_details, options.maxRepairChars) : ""
        if (detailsText === undefined) {
          done = true
          return Effect.fail(invalidResponse(options.provider, `a reasoning_details block grew past ${options.maxRepairChars} characters`))
        }
        if (delta.reasoning) out.push(ProviderEvent.ReasoningDelta({ text: delta.reasoning }))
        else if (detailsText.length > 0 && !delta.reasoning_content) {
          out.push(ProviderEvent.ReasoningDelta({ text: detailsText }))
        }
        if (delta.content) out.push(ProviderEvent.TextDelta({ text: delta.content }))
        if (delta.tool_calls && !finished && absorbToolCalls(delta.tool_calls)) return cutAtArgumentCap(out)
      }
    }
    // Usage before the calls: the loop may stop reading once it has them (DeepSeek sends both in one chunk).
    const usage = chunk.usage
    if (usage) {
      out.push(ProviderEvent.Usage({
        usage: makeUsage({
          inputTokens: usage.prompt_tokens ?? 0,
          outputTokens: usage.completion_tokens ?? 0,
          totalTokens: usage.total_tokens,
          cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens,
          reasoningTokens: usage.completion_tokens_details?.reasoning_tokens
        })
      }))
    }
    if (choice?.finish_reason) after = finish(out, finishReasonOf(choice.finish_reason))
    return after
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
      const data = frame.data
      if (data === "[DONE]" || data.trim() === "[DONE]") {
        const log = finish(out, calls.length > 0 ? "tool_calls" : "stop")
        if (log) effects.push(log)
        release(out)
        done = true
        break
      }
      const parsed = parseJsonFrame(data)
      if (!parsed.ok) {
        effects.push(Effect.fail(invalidResponse(options.provider, `an event whose data is not JSON: ${data.slice(0, 200)}`)))
        done = true
        break
      }
      const decoded = readChatCompletionChunk(frame.event === "error" ? { error: parsed.value } : parsed.value)
      if (decoded === undefined) {
        effects.push(Effect.fail(invalidResponse(options.provider, `an event of unexpected shape: ${data.slice(0, 200)}`)))
        done = true
        break
      }
      const after = applyChunk(decoded, out)
      if (after) effects.push(after)
      if (done) break
    }
    return step(out, effects)
  }

  return {
    push,
    pushChunk: (chunk) => {
      sawFrames = true
      const out: Array<ProviderEvent> = []
      const effects: Array<Effect.Effect<void, ProviderError>> = []
      const after = applyChunk(chunk, out)
      if (after) effects.push(after)
      return step(out, effects)
    },
    end: () => {
      if (done || finished) {
        const out: Array<ProviderEvent> = []
        release(out)
        return { out }
      }
      return { out: [], then: Effect.fail(endedEarly(options.provider, sawFrames)) }
    }
  }
}

/** Events for a whole (non-streamed) completion, from a server that ignored `stream: true`. */
export const completionEvents = (
  value: unknown,
  options: ChatCompletionsDecoderOptions
): DecodeStep<ProviderEvent, ProviderError> => {
  const decoded = readChatCompletionChunk(value)
  if (decoded === undefined) {
    return { out: [], then: Effect.fail(invalidResponse(options.provider, "a JSON response of unexpected shape")) }
  }
  const decoder = makeChatCompletionsDecoder(options)
  // The message is applied as one delta, then the end marker.
  const first = decoder.pushChunk({
    ...decoded,
    choices: (decoded.choices ?? []).map((choice) => ({ ...choice, delta: choice.message ?? choice.delta }))
  })
  const last = decoder.push([{ _tag: "Event", event: "message", id: undefined, data: "[DONE]" }])
  const effects = [first.then, last.then].filter((effect) => effect !== undefined)
  return {
    out: [...first.out, ...last.out],
    then: effects.length === 0 ? undefined : Effect.all(effects, { discard: true })
  }
}
