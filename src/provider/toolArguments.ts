import { Effect, Metric, Predicate } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import { defaultJsonRepairMaxChars, tryRepairIncompleteJson } from "./jsonRepair"
import { parseJsonFrame } from "./jsonFrame"

/** How an accumulated argument payload turned out (docs/architecture.md, "Truncated tool arguments"). */
type ArgumentsOutcome =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Parsed"; readonly args: ToolArgs }
  | { readonly _tag: "Repaired"; readonly args: ToolArgs }
  /** Not JSON, not a truncation we can repair, or not an object: the call gets `{}`. */
  | { readonly _tag: "Unparseable" }

export const classifyArguments = (raw: string, maxRepairChars: number = defaultJsonRepairMaxChars): ArgumentsOutcome => {
  if (raw.trim().length === 0) return { _tag: "Empty" }
  const parsed = parseJsonFrame(raw)
  if (parsed.ok) return Predicate.isObject(parsed.value) ? { _tag: "Parsed", args: parsed.value } : { _tag: "Unparseable" }
  const repaired = tryRepairIncompleteJson(raw, maxRepairChars)
  return repaired === null ? { _tag: "Unparseable" } : { _tag: "Repaired", args: repaired }
}

interface FinalizedArguments {
  readonly args: ToolArgs
  readonly truncated: boolean
}

interface ArgumentsContext {
  /** Adapter name for the log line, e.g. `openai-compatible`. */
  readonly adapter: string
  readonly toolName: string
  readonly maxRepairChars: number
  /**
   * The provider said it cut the output (`length`, `content_filter`, `max_tokens`). An argument
   * payload that is then empty or unreadable is refused as truncated rather than run with `{}`.
   */
  readonly outputCut: boolean
}

const truncatedCalls = Metric.counter("tool_arguments_truncated", {
  description: "tool calls whose argument JSON was cut by the provider and structurally repaired"
})

const countTruncated = (adapter: string): Effect.Effect<void> => Metric.update(Metric.withAttributes(truncatedCalls, { adapter }), 1)

/**
 * The most tool calls one pass may make: a decoder keeps no more (each is bounded by the
 * argument cap, so the number of calls is what bounds a pass's memory), and the loop runs them all.
 */
export const maxCallsPerPass = 64

/** The warning a decoder logs once when a pass made more calls than `maxCallsPerPass`. */
export const callsPastCap = (adapter: string): Effect.Effect<void> =>
  Effect.logWarning(`a pass made more than ${maxCallsPerPass} tool calls; the calls past that are ignored`).pipe(
    Effect.annotateLogs({ adapter })
  )

/** Several logs as one effect (undefined when there are none). */
export const allLogs = (logs: ReadonlyArray<Effect.Effect<void>>): Effect.Effect<void> | undefined =>
  logs.length === 0 ? undefined : logs.length === 1 ? logs[0] : Effect.all(logs, { discard: true })

/**
 * Whether one more streamed piece takes a call's arguments past `maxChars`
 * (`BOT_JSON_REPAIR_MAX_CHARS`): a provider may stream arguments without end, and a decoder
 * keeps none beyond the cap.
 */
export const exceedsArgumentCap = (heldChars: number, piece: string, maxChars: number): boolean => heldChars + piece.length > maxChars

/**
 * A call whose streamed arguments outgrew the cap: nothing of them is kept and the call is
 * refused as truncated (the decoder stops reading there, which aborts the request).
 */
export const argumentsOverCap = (context: {
  readonly adapter: string
  readonly toolName: string
  readonly maxChars: number
}): { readonly result: FinalizedArguments; readonly log: Effect.Effect<void> } => ({
  result: { args: {}, truncated: true },
  log: Effect.logError("tool arguments outgrew BOT_JSON_REPAIR_MAX_CHARS; the stream was stopped and the call is refused as truncated").pipe(
    Effect.annotateLogs({ adapter: context.adapter, tool_name: context.toolName, max_chars: context.maxChars }),
    Effect.andThen(countTruncated(context.adapter))
  )
})

/**
 * Decides a call's arguments and whether they were truncated. Pure apart from the log: the
 * returned effect logs the `tool_arguments_truncated` line (error level, so it is seen in
 * production) or the unparseable-arguments error, or nothing.
 */
export const finalizeArguments = (
  raw: string,
  context: ArgumentsContext
): { readonly result: FinalizedArguments; readonly log: Effect.Effect<void> | undefined } => {
  const outcome = classifyArguments(raw, context.maxRepairChars)
  const annotations = { adapter: context.adapter, tool_name: context.toolName, argument_chars: raw.length }
  switch (outcome._tag) {
    case "Parsed":
      return { result: { args: outcome.args, truncated: false }, log: undefined }
    case "Repaired":
      return {
        result: { args: outcome.args, truncated: true },
        log: Effect.logError("tool_arguments_truncated").pipe(
          Effect.annotateLogs({ ...annotations, recovered_keys: Object.keys(outcome.args).join(",") }),
          Effect.andThen(countTruncated(context.adapter))
        )
      }
    case "Empty":
      return context.outputCut
        ? {
          result: { args: {}, truncated: true },
          log: Effect.logError("tool_arguments_truncated").pipe(
            Effect.annotateLogs({ ...annotations, recovered_keys: "" }),
            Effect.andThen(countTruncated(context.adapter))
          )
        }
        : { result: { args: {}, truncated: false }, log: undefined }
    case "Unparseable":
      return {
        result: { args: {}, truncated: context.outputCut },
        log: Effect.logError(
          context.outputCut
            ? "tool arguments were cut by the provider and cannot be repaired; refusing the call"
            : "tool arguments are not a JSON object and cannot be repaired; calling with {}"
        ).pipe(Effect.annotateLogs(annotations))
      }
  }
}
