import { Clock, Effect, Layer, Metric } from "effect"
import type { TurnInput } from "../chat/TurnInput"
import { TurnObserver, type TurnObserverShape } from "../chat/TurnObserver"
import type { TurnResult } from "../domain/TurnResult"
import { Instrumentation, type InstrumentationShape } from "./Instrumentation"
import {
  contextElisionsTotal,
  contextOverflowsTotal,
  fallbacksTotal,
  hashedGuild,
  keyRotationsTotal,
  makeToolLabels,
  runningTurns,
  toolDuration,
  turnDuration,
  turnsTotal
} from "./metrics"

/** What the context budget left out or cut in a turn, by metric label (zeros left out). */
export const contextElisions = (result: TurnResult): ReadonlyArray<readonly [kind: string, count: number]> => {
  const context = result.context
  if (context === undefined) return []
  const counts: ReadonlyArray<readonly [string, number]> = [
    ["tool_result", context.elided.toolResults],
    ["tool_exchange", context.elided.toolExchanges],
    ["history_message", context.elided.historyMessages],
    ["history_image", context.elided.historyImages],
    ["cut_tool_result", context.elided.cutToolResults],
    ["cut_user_message", context.cutUserMessage === null ? 0 : 1]
  ]
  return counts.filter(([, count]) => count > 0)
}

/** Rotations and fallbacks, read off the attempts: the same model again is a key rotation, another model a fallback. */
export const attemptMoves = (result: TurnResult): { readonly rotations: number; readonly fallbacks: number } => {
  let rotations = 0
  let fallbacks = 0
  for (let index = 1; index < result.attempts.length; index++) {
    if (result.attempts[index]?.model === result.attempts[index - 1]?.model) rotations++
    else fallbacks++
  }
  return { rotations, fallbacks }
}

const makeObserver = (instrumentation: InstrumentationShape) =>
  Effect.gen(function*() {
    const toolLabel = yield* makeToolLabels

    const recordMetrics = (result: TurnResult, elapsedMs: number) =>
      Effect.gen(function*() {
        const { fallbacks, rotations } = attemptMoves(result)
        yield* Metric.update(Metric.withAttributes(turnsTotal, { status: result.status }), 1)
        yield* Metric.update(turnDuration, elapsedMs)
        if (rotations > 0) yield* Metric.update(keyRotationsTotal, rotations)
        if (fallbacks > 0) yield* Metric.update(fallbacksTotal, fallbacks)
        for (const [kind, count] of contextElisions(result)) {
          yield* Metric.update(Metric.withAttributes(contextElisionsTotal, { kind }), count)
        }
        const refusals = result.context?.overflowRefusals ?? 0
        if (refusals > 0) yield* Metric.update(contextOverflowsTotal, refusals)
        for (const call of result.toolCalls) {
          const tool = yield* toolLabel(call.name)
          yield* Metric.update(
            Metric.withAttributes(toolDuration, { tool, outcome: call.success ? "success" : "failure" }),
            call.durationMs
          )
        }
      })

    const annotateSpan = (result: TurnResult) =>
      Effect.annotateCurrentSpan({
        "loopcord.turn.status": result.status,
        "loopcord.turn.iterations": result.iterations,
        "loopcord.turn.tool_calls": result.toolCalls.length,
        "loopcord.turn.attempts": result.attempts.length,
        ...(result.attempts.length === 0 ? {} : { "gen_ai.request.model": result.attempts[result.attempts.length - 1]?.model ?? "" })
      })

    const observe: TurnObserverShape["observe"] = <E, R>(input: TurnInput, turn: Effect.Effect<TurnResult, E, R>) => {
      const measured = Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        if (instrumentation.metrics) yield* Metric.modify(runningTurns, 1)
        const result = yield* turn.pipe(
          Effect.ensuring(instrumentation.metrics ? Metric.modify(runningTurns, -1) : Effect.void)
        )
        if (instrumentation.tracing) yield* annotateSpan(result)
        if (instrumentation.metrics) yield* recordMetrics(result, (yield* Clock.currentTimeMillis) - startedAt)
        return result
      })
      // A trace per turn: the channel worker that runs it would otherwise parent it to the first message's submit.
      return instrumentation.tracing
        ? Effect.withSpan(measured, "loopcord.turn", {
          root: true,
          attributes: { "loopcord.guild": hashedGuild(input.guildId), "loopcord.dm": input.isDM }
        })
        : measured
    }
    return { observe } satisfies TurnObserverShape
  })

/** Turn spans and metrics when Instrumentation says so; otherwise turns run unobserved. */
export const observedTurnsLayer: Layer.Layer<never> = Layer.effect(
  TurnObserver,
  Effect.gen(function*() {
    const instrumentation = yield* Instrumentation
    if (!instrumentation.tracing && !instrumentation.metrics) return yield* TurnObserver
    return yield* makeObserver(instrumentation)
  })
)
