import { Data, Duration } from "effect"
import type { FunctionCall, ToolArgs } from "../../domain/FunctionCall"
import { ProviderError, type ProviderErrorReason } from "../../domain/ProviderError"
import { type FinishReason, ProviderEvent } from "../../domain/ProviderEvent"
import { TokenUsage } from "../../domain/TokenUsage"
import type { GenerationRequest } from "../GenerationRequest"

/**
 * One step of a scripted pass: emit an event, wait on the Clock, fail the stream, or hang
 * until interrupted (a provider that went silent).
 */
export type ScriptStep = Data.TaggedEnum<{
  Emit: { readonly event: ProviderEvent }
  Sleep: { readonly duration: Duration.Duration }
  Fail: { readonly error: ProviderError }
  Hang: {}
}>

export const ScriptStep = Data.taggedEnum<ScriptStep>()

/** The steps of one `LanguageModel.stream` call, in order. */
export type ScriptedPass = ReadonlyArray<ScriptStep>

/** Which call this is (0-based, across the whole script) and what was asked. */
export interface ScriptCall {
  readonly index: number
  /** Which call for this request's model this is (0-based): lets one script play several models. */
  readonly modelIndex: number
  readonly request: GenerationRequest
}

/**
 * A whole script: a list of passes consumed one per stream call, or a function that picks the
 * pass from the call (answer by model, by key, by history length...). `undefined` from the
 * function, or running past the end of the list, fails the pass: the script is exhausted.
 */
export type Script = ReadonlyArray<ScriptedPass> | ((call: ScriptCall) => ScriptedPass | undefined)

/**
 * One list of passes per model name, each consumed in order by the calls for that model (an
 * author and a reviewer scripted separately). A model without a list, or past its end, fails.
 */
export const byModel = (passes: Readonly<Record<string, ReadonlyArray<ScriptedPass>>>): Script => (call) =>
  passes[call.request.model]?.[call.modelIndex]

// Step constructors, so scripts read like the conversation they replay.

export const text = (value: string): ScriptStep => ScriptStep.Emit({ event: ProviderEvent.TextDelta({ text: value }) })

export const reasoning = (value: string): ScriptStep =>
  ScriptStep.Emit({ event: ProviderEvent.ReasoningDelta({ text: value }) })

export const toolCall = (name: string, args?: ToolArgs, extra: Omit<FunctionCall, "name" | "args"> = {}): ScriptStep =>
  ScriptStep.Emit({ event: ProviderEvent.ToolCall({ call: { ...extra, name, args } }) })

export const usage = (inputTokens: number, outputTokens: number): ScriptStep =>
  ScriptStep.Emit({
    event: ProviderEvent.Usage({ usage: TokenUsage({ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }) })
  })

export const finish = (reason: FinishReason = "stop"): ScriptStep => ScriptStep.Emit({ event: ProviderEvent.Finish({ reason }) })

export const keepAlive: ScriptStep = ScriptStep.Emit({ event: ProviderEvent.KeepAlive() })

export const sleep = (duration: Duration.Input): ScriptStep => ScriptStep.Sleep({ duration: Duration.fromInputUnsafe(duration) })

export const hang: ScriptStep = ScriptStep.Hang()

export const fail = (
  reason: ProviderErrorReason,
  detail = `scripted ${reason}`,
  extra: { readonly status?: number; readonly retryAfter?: Duration.Duration } = {}
): ScriptStep => ScriptStep.Fail({ error: new ProviderError({ reason, provider: "scripted", detail, ...extra }) })

/** A pass that streams `value` and finishes normally. */
export const reply = (value: string): ScriptedPass => [text(value), finish("stop")]

/** A pass that asks for one tool call. */
export const callTool = (name: string, args: ToolArgs = {}, preText?: string): ScriptedPass =>
  preText === undefined ? [toolCall(name, args), finish("tool_calls")] : [text(preText), toolCall(name, args), finish("tool_calls")]

/** A pass that asks for several tool calls at once (a model calling in parallel), in order. */
export const callTools = (
  calls: ReadonlyArray<{ readonly name: string; readonly args?: ToolArgs; readonly id?: string }>,
  preText?: string
): ScriptedPass => [
  ...(preText === undefined ? [] : [text(preText)]),
  ...calls.map((call) => toolCall(call.name, call.args ?? {}, call.id === undefined ? {} : { id: call.id })),
  finish("tool_calls")
]
