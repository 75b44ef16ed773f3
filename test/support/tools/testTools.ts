/**
 * Test tools for registry, executeToolCall and runToolLoop tests.
 *
 * - `rawTool({ name, execute, ... })`: a Tool with sensible defaults (no parameters, builtin,
 *   available everywhere); override any field.
 * - `echoTool`: a schema-validated `echo_tool {text}` returning `{ echoed: text }` (scenario 2).
 * - `constantTool(name, result)`: always returns `result`.
 * - `stickerPickTool(sticker)`: `select_sticker_for_response` always choosing `sticker` (its turn effect).
 * - `failingTool(name, error, userMessage?)`: fails with a ToolError.
 * - `dyingTool(name, message)`: dies with an Error (a bug in the tool).
 * - `makeHangingTool(name)`: never resolves; exposes `started`, `finalized` and the call's
 *   AbortSignal so a test can prove the loser of the race was interrupted.
 * - `makeRecordingTool(name, respond)`: records every call's args and ToolContext.
 */
import { Deferred, Effect, Ref, Schema } from "effect"
import type { ToolArgs } from "../../../src/domain/FunctionCall"
import type { Sticker } from "../../../src/domain/Sticker"
import { toolSuccess, type ToolResult } from "../../../src/domain/ToolResult"
import { TurnEffect } from "../../../src/domain/TurnEffect"
import { makeTool, type Tool } from "../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../src/tools/ToolContext"
import { ToolError } from "../../../src/tools/ToolError"

export const rawTool = (spec: Partial<Tool> & { readonly name: string }): Tool => ({
  description: `Test tool ${spec.name}`,
  category: "utility",
  parameters: { type: "object", properties: {}, required: [] },
  source: { kind: "builtin" },
  execute: () => Effect.succeed(toolSuccess()),
  isAvailableFor: () => true,
  ...spec
})

export const echoTool: Tool = makeTool({
  name: "echo_tool",
  description: "Echoes the text back",
  category: "utility",
  parameters: Schema.Struct({ text: Schema.String }),
  execute: ({ text }) => Effect.succeed(toolSuccess({ echoed: text }))
})

export const constantTool = (name: string, result: ToolResult, overrides: Partial<Tool> = {}): Tool =>
  rawTool({ name, execute: () => Effect.succeed(result), ...overrides })

export const stickerPickTool = (sticker: Sticker, name = "select_sticker_for_response"): Tool =>
  constantTool(
    name,
    toolSuccess({ sticker_id: sticker.id }, { turnEffect: TurnEffect.StickerSelected({ sticker }) }),
    { turnEffect: "StickerSelected" }
  )

export const failingTool = (name: string, error: string, userMessage?: string): Tool =>
  rawTool({
    name,
    execute: () => Effect.fail(new ToolError({ tool: name, error, ...(userMessage === undefined ? {} : { userMessage }) }))
  })

export const dyingTool = (name: string, message: string): Tool =>
  rawTool({ name, execute: () => Effect.die(new Error(message)) })

export interface HangingTool {
  readonly tool: Tool
  /** Completes when the tool starts running. */
  readonly started: Deferred.Deferred<void>
  /** True once the tool's finalizer ran (it was interrupted). */
  readonly finalized: Ref.Ref<boolean>
  /**
   * Completes when the finalizer ran: a losing tool is interrupted in the background, so its
   * finalizer may run just after the race's result is known.
   */
  readonly whenFinalized: Effect.Effect<void>
  /** The AbortSignal of the last call. */
  readonly signal: Ref.Ref<AbortSignal | undefined>
}

export const makeHangingTool = (name: string): Effect.Effect<HangingTool> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const finalized = yield* Ref.make(false)
    const finalizedDone = yield* Deferred.make<void>()
    const signal = yield* Ref.make<AbortSignal | undefined>(undefined)
    const tool = rawTool({
      name,
      execute: () =>
        Effect.gen(function*() {
          const context = yield* ToolContext
          yield* Ref.set(signal, context.abortSignal)
          yield* Deferred.succeed(started, undefined)
          return yield* Effect.never
        }).pipe(Effect.ensuring(Effect.andThen(Ref.set(finalized, true), Deferred.succeed(finalizedDone, undefined))))
    })
    return { tool, started, finalized, whenFinalized: Deferred.await(finalizedDone), signal }
  })

export interface RecordedCall {
  readonly args: ToolArgs
  readonly context: ToolContextShape
}

export interface RecordingTool {
  readonly tool: Tool
  readonly calls: Ref.Ref<ReadonlyArray<RecordedCall>>
}

/** A tool that records each call (args + ToolContext) and answers with `respond`. */
export const makeRecordingTool = (
  name: string,
  respond: (args: ToolArgs, call: number) => Effect.Effect<ToolResult, ToolError, ToolContext> = () => Effect.succeed(toolSuccess()),
  overrides: Partial<Tool> = {}
): Effect.Effect<RecordingTool> =>
  Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<RecordedCall>>([])
    const tool = rawTool({
      name,
      execute: (args) =>
        Effect.gen(function*() {
          const context = yield* ToolContext
          const previous = yield* Ref.getAndUpdate(calls, (all) => [...all, { args, context }])
          return yield* respond(args, previous.length)
        }),
      ...overrides
    })
    return { tool, calls }
  })
