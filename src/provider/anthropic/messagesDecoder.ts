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

const UsageFields = Schema.Struct({
  input_tokens: OptionalNumber,
  output_tokens: OptionalNumber,
  cache_creation_input_tokens: OptionalNumber,
  cache_read_input_tokens: OptionalNumber
})

/** One Messages stream event; lenient, since Anthropic adds event and block types over time. */
const MessagesEvent = Schema.Struct({
  type: Schema.String,
  index: OptionalNumber,
  message: Schema.optional(Schema.NullOr(Schema.Struct({ usage: Schema.optional(Schema.NullOr(UsageFields)) }))),
  content_block: Schema.optional(Schema.NullOr(Schema.Struct({
    type: Schema.String,
    id: OptionalString,
    name: OptionalString,
    input: Schema.optional(Schema.Unknown),
    text: OptionalString,
    thinking: OptionalString,
    signature: OptionalString,
    data: OptionalString
  }))),
  delta: Schema.optional(Schema.NullOr(Schema.Struct({
    type: OptionalString,
    text: OptionalString,
    partial_json: OptionalString,
    thinking: OptionalString,
    signature: OptionalString,
    stop_reason: OptionalString
  }))),
  usage: Schema.optional(Schema.NullOr(UsageFields)),
  error: Schema.optional(Schema.Unknown)
})
type MessagesEvent = typeof MessagesEvent.Type

const decodeEvent = Schema.decodeUnknownResult(MessagesEvent)

const stopReasonOf = (raw: string): FinishReason => {
  switch (raw) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      return "other"
  }
}

interface ToolBlock {
  readonly id: string | undefined
  readonly name: string
  readonly startInput: unknown
  readonly json: Array<string>
  jsonChars: number
  /** Its arguments outgrew the cap: none are kept, and the call is refused as truncated. */
  overCap: boolean
}

interface ThinkingBlock {
  readonly type: "thinking" | "redacted_thinking"
  thinking: string
  signature: string | undefined
  data: string | undefined
}

/**
 * Decodes Messages SSE events: text and thinking deltas as they come; each `tool_use` block's
 * `input_json_delta` pieces accumulated by block index, and every call emitted as its own
 * `ToolCall`, in block order, once the stop reason is known (`message_delta`), so a `max_tokens`
 * cut is recognized; the pass's thinking blocks with their signatures go on its first call for
 * replay; `ping` is a keep-alive; `error` fails. A stream that closes before `message_stop` and
 * without a stop reason is a `Network` error.
 */
export const makeMessagesDecoder = (options: {
  readonly provider: string
  /**
   * `BOT_JSON_REPAIR_MAX_CHARS`: the longest argument payload one call may stream (past it the
   * stream stops and the call is refused as truncated), and the longest cut one that is repaired.
   */
  readonly maxRepairChars: number
}): Decoder<SseFrame, ProviderEvent, ProviderError> => {
  const tools = new Map<number, ToolBlock>()
  /** The pass's calls in the order their blocks started. */
  const toolOrder: Array<ToolBlock> = []
  let toolsOverflowed = false
  const thinking = new Map<number, ThinkingBlock>()
  /** Input counts from `message_start`, corrected by a `message_delta` that repeats them. */
  let uncachedInput = 0
  let cacheRead = 0
  let cacheWrite = 0
  const takeInput = (usage: typeof UsageFields.Type) => {
    if (typeof usage.input_tokens === "number") uncachedInput = usage.input_tokens
    if (typeof usage.cache_read_input_tokens === "number") cacheRead = usage.cache_read_input_tokens
    if (typeof usage.cache_creation_input_tokens === "number") cacheWrite = usage.cache_creation_input_tokens
  }
  let callEmitted = false
  let finished = false
  let done = false
  let sawFrames = false
  const keepAlive = ProviderEvent.KeepAlive()

  /** Emits every call of the pass, in block order (once: the blocks are cleared). */
  const finalizeCalls = (out: Array<ProviderEvent>, outputCut: boolean): Effect.Effect<void> | undefined => {
    const blocks = [...toolOrder]
    toolOrder.length = 0
    tools.clear()
    const logs: Array<Effect.Effect<void>> = []
    for (const block of blocks) {
      const { log, result } = block.overCap
        ? argumentsOverCap({ adapter: options.provider, toolName: block.name, maxChars: options.maxRepairChars })
        : finalizeArguments(block.json.length > 0 ? block.json.join("") : startInputJson(block.startInput), {
          adapter: options.provider,
          toolName: block.name,
          maxRepairChars: options.maxRepairChars,
          outputCut
        })
      if (log) logs.push(log)
      // The pass's thinking is replayed once, before its first call.
      const replay = callEmitted ? [] : [...thinking.values()].map((entry) =>
        entry.type === "thinking"
          ? { type: "thinking", thinking: entry.thinking, ...(entry.signature === undefined ? {} : { signature: entry.signature }) }
          : { type: "redacted_thinking", data: entry.data ?? "" }
      )
      const call: FunctionCall = {
        name: block.name,
        args: result.args,
        ...(result.truncated ? { argumentsTruncated: true } : {}),
        ...(block.id === undefined ? {} : { id: block.id }),
        ...(replay.length === 0 ? {} : { reasoningDetails: replay })
      }
      callEmitted = true
      out.push(ProviderEvent.ToolCall({ call }))
    }
    if (toolsOverflowed) logs.push(callsPastCap(options.provider))
    return allLogs(logs)
  }

  const finish = (out: Array<ProviderEvent>, reason: FinishReason): Effect.Effect<void> | undefined => {
    if (finished) return undefined
    finished = true
    const log = finalizeCalls(out, reason === "length" || reason === "content_filter")
    out.push(ProviderEvent.Finish({ reason: reason === "stop" && callEmitted ? "tool_calls" : reason }))
    return log
  }

  const apply = (event: MessagesEvent, out: Array<ProviderEvent>): Effect.Effect<void, ProviderError> | undefined => {
    switch (event.type) {
      case "ping":
        out.push(keepAlive)
        return undefined
      case "error":
        done = true
        return Effect.fail(fromStreamErrorPayload(options.provider, { error: event.error }))
      case "message_start": {
        const usage = event.message?.usage
        if (usage) takeInput(usage)
        return undefined
      }
      case "content_block_start": {
        const block = event.content_block
        const index = event.index ?? 0
        if (!block) return undefined
        if (block.type === "tool_use" && block.name) {
          if (finished || tools.has(index)) return undefined
          if (toolOrder.length >= maxCallsPerPass) {
            toolsOverflowed = true
            return undefined
          }
          const tool: ToolBlock = { id: block.id ?? undefined, name: block.name, startInput: block.input, json: [], jsonChars: 0, overCap: false }
          tools.set(index, tool)
          toolOrder.push(tool)
        } else if (block.type === "thinking" || block.type === "redacted_thinking") {
          thinking.set(index, {
            type: block.type,
            thinking: block.thinking ?? "",
            signature: block.signature ?? undefined,
            data: block.data ?? undefined
          })
          if (block.thinking) out.push(ProviderEvent.ReasoningDelta({ text: block.thinking }))
        } else if (block.type === "text" && block.text) {
          out.push(ProviderEvent.TextDelta({ text: block.text }))
        }
        return undefined
      }
      case "content_block_delta": {
        const delta = event.delta
        const index = event.index ?? 0
        if (!delta) return undefined
        switch (delta.type) {
          case "text_delta":
            if (delta.text) out.push(ProviderEvent.TextDelta({ text: delta.text }))
            return undefined
          case "input_json_delta": {
            const tool = tools.get(index)
            if (!delta.partial_json || tool === undefined) return undefined
            if (exceedsArgumentCap(tool.jsonChars, delta.partial_json, options.maxRepairChars)) {
              // Nothing more is read: every call goes out now, as the output was cut here.
              tool.json.length = 0
              tool.overCap = true
              done = true
              return finish(out, "length")
            }
            tool.json.push(delta.partial_json)
            tool.jsonChars += delta.partial_json.length
            return undefined
          }
          case "thinking_delta": {
            if (!delta.thinking) return undefined
            const block = thinking.get(index)
            if (block) block.thinking += delta.thinking
            out.push(ProviderEvent.ReasoningDelta({ text: delta.thinking }))
            return undefined
          }
          case "signature_delta": {
            const block = thinking.get(index)
            if (!block || !delta.signature) return undefined
            // A signature shows nothing, so no other cap sees it grow: it has one of its own.
            if ((block.signature?.length ?? 0) + delta.signature.length > options.maxRepairChars) {
              done = true
              return Effect.fail(invalidResponse(options.provider, `a thinking block's signature grew past ${options.maxRepairChars} characters`))
            }
            block.signature = (block.signature ?? "") + delta.signature
            return undefined
          }
          default:
            return undefined
        }
      }
      case "message_delta": {
        // Usage before the calls: the loop may stop reading once it has them.
        const usage = event.usage
        if (usage) {
          takeInput(usage)
          // Anthropic's `input_tokens` is only the part after the last cache breakpoint: the
          // input total adds the cache reads and writes (which are reported apart).
          out.push(ProviderEvent.Usage({
            usage: makeUsage({
              inputTokens: uncachedInput + cacheRead + cacheWrite,
              outputTokens: usage.output_tokens ?? 0,
              cachedInputTokens: cacheRead,
              cacheWriteTokens: cacheWrite
            })
          }))
        }
        return event.delta?.stop_reason ? finish(out, stopReasonOf(event.delta.stop_reason)) : undefined
      }
      case "message_stop": {
        done = true
        return finish(out, toolOrder.length > 0 ? "tool_calls" : "stop")
      }
      default:
        // content_block_stop and event types added later carry nothing we act on.
        return undefined
    }
  }

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
      const decoded = decodeEvent(parsed.value)
      if (Result.isFailure(decoded)) {
        effects.push(Effect.fail(invalidResponse(options.provider, `an event of unexpected shape: ${frame.data.slice(0, 200)}`)))
        done = true
        break
      }
      const after = apply(decoded.success, out)
      if (after) effects.push(after)
      if (done) break
    }
    return {
      out,
      then: effects.length === 0 ? undefined : effects.length === 1 ? effects[0] : Effect.all(effects, { discard: true }),
      done
    }
  }

  return {
    push,
    end: () => (done || finished ? { out: [] } : { out: [], then: Effect.fail(endedEarly(options.provider, sawFrames)) })
  }
}

/** The `input` of `content_block_start` when no JSON deltas followed (a tool without parameters). */
const startInputJson = (input: unknown): string =>
  Predicate.isObject(input) && Object.keys(input).length > 0
    ? JSON.stringify(input)
    : ""
