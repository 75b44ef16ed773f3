import { Clock, Duration, Effect, Exit } from "effect"
import { LoopConfig } from "../config/LoopConfig"
import { turnOriginOf } from "../domain/TurnOrigin"
import type { ToolArgs } from "../domain/FunctionCall"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import { ToolContext, type ToolContextShape } from "../tools/ToolContext"
import { ToolRegistry } from "../tools/ToolRegistry"
import type { AttemptInfo } from "./AttemptInfo"
import { CurrentTurn } from "./CurrentTurn"
import { makeFirstWins } from "./FirstWins"
import { ResponseSink } from "./ResponseSink"
import { longestNap } from "./TurnAlarm"
import { TurnSignals } from "./TurnSignals"
import { UserNotice } from "./UserNotice"

/**
 * Runs one tool call: builds its ToolContext, then races the tool against its timeout (which
 * starts now) and /kill; the losers are interrupted.
 */
export const raceTool = (name: string, args: ToolArgs, iteration: number, attempt: AttemptInfo) =>
  Effect.gen(function*() {
    const turn = yield* CurrentTurn
    const signals = yield* TurnSignals
    const registry = yield* ToolRegistry
    const config = yield* LoopConfig
    const sink = yield* ResponseSink
    const suppressProgressNotices = !turn.shouldSurfaceUserErrors
    const abort = new AbortController()
    const context: ToolContextShape = {
      ...turnOriginOf(turn),
      provider: attempt.provider,
      model: attempt.model,
      suppressProgressNotices,
      showKillHint: iteration >= config.softWarnIteration,
      iteration,
      turnState: turn.state,
      abortSignal: abort.signal,
      killed: signals.awaitKill,
      progress: (text) => suppressProgressNotices ? Effect.void : sink.notice(UserNotice.ToolProgress({ tool: name, text }))
    }
    const timeoutMs = Duration.toMillis(config.toolExecutionTimeout)
    const timedOut = toolFailure(`Tool "${name}" timed out after ${timeoutMs / 1000}s.`)
    const killed = toolFailure(`Tool "${name}" was killed.`)
    const startedAt = yield* Clock.currentTimeMillis
    // The first of the tool, its deadline and /kill decides. The tool runs as a daemon
    // interrupted in the background once it lost, so its slow or uninterruptible cleanup never
    // delays the outcome (its finalizers still run); the deadline is watched by the turn's alarm
    // and /kill heard by a signal listener, so neither needs a fiber of its own. The onExit below
    // reaches the tool, the alarm and the listener on every path.
    const first = makeFirstWins<ToolResult>()
    const tool = yield* Effect.forkDetach(
      Effect.map(registry.execute(name, args).pipe(Effect.provideService(ToolContext, context)), first.settle)
    )
    const disarm = yield* signals.alarm.arm(() => startedAt + timeoutMs, longestNap(config), () => first.settle(timedOut))
    const stopListening = yield* signals.onKill(() => first.settle(killed))
    const self = yield* Effect.fiberId
    const result = yield* first.await.pipe(
      Effect.onExit((exit) =>
        Effect.sync(() => {
          stopListening()
          disarm()
          // Abandoned (timeout, kill, the turn interrupted): promise-based work is cancelled on the wire at once.
          if (Exit.isFailure(exit) || exit.value === timedOut || exit.value === killed) abort.abort()
          tool.interruptUnsafe(self)
        })
      )
    )
    const durationMs = (yield* Clock.currentTimeMillis) - startedAt
    yield* Effect.logInfo(`Function call completed: ${name} (${durationMs}ms)`)
    return { result, durationMs }
  })
