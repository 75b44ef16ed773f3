import { Cause, Clock, Deferred, Duration, Effect, Exit, Fiber, Option, Ref, Stream } from "effect"
import { DeliveryError, ResponseSink } from "../chat/ResponseSink"
import { UserNotice } from "../chat/UserNotice"
import { LoopConfig } from "../config/LoopConfig"
import type { FunctionCall } from "../domain/FunctionCall"
import { PassResult, type StopReason } from "../domain/PassResult"
import { ProviderError } from "../domain/ProviderError"
import { type FinishReason, isContent, type ProviderEvent } from "../domain/ProviderEvent"
import type { TokenUsage } from "../domain/TokenUsage"
import type { GenerationRequest } from "../provider/GenerationRequest"
import { LanguageModel } from "../provider/LanguageModel"
import type { AttemptInfo } from "./AttemptInfo"
import { feedEcho, startEcho } from "./PrefillEcho"
import { type TurnRequest, TurnSignals } from "./TurnSignals"

export interface StreamOnceInput {
  readonly request: GenerationRequest
  readonly attempt: AttemptInfo
}

/** What the consumer of one provider stream has seen so far. */
interface PassState {
  readonly sawContent: boolean
  readonly usage: TokenUsage | undefined
  readonly finishReason: FinishReason | undefined
  readonly call: FunctionCall | undefined
  readonly reasoning: string
}

const initialState: PassState = {
  sawContent: false,
  usage: undefined,
  finishReason: undefined,
  call: undefined,
  reasoning: ""
}

type Phase = "first_token" | "idle"

interface Deadline {
  readonly at: number
  readonly phase: Phase
}

/** How the race around the provider stream ended. */
type Ending =
  | { readonly _tag: "Ended"; readonly exit: Exit.Exit<void, ProviderError | DeliveryError> }
  | { readonly _tag: "TimedOut"; readonly phase: Phase }
  | { readonly _tag: "Requested"; readonly request: TurnRequest }

/**
 * Sleeps until the (moving) deadline passes; returns the phase it expired in. Re-arming only
 * moves the deadline later, except at the first content, which can bring it earlier (the
 * inactivity budget is usually shorter than the first-token one): that wakes the watchdog.
 */
const watchdog = (deadline: Ref.Ref<Deadline>, firstContent: Deferred.Deferred<void>): Effect.Effect<Phase> =>
  Effect.gen(function*() {
    while (true) {
      const { at, phase } = yield* Ref.get(deadline)
      const now = yield* Clock.currentTimeMillis
      if (now >= at) return phase
      const nap = Effect.sleep(Duration.millis(at - now))
      yield* phase === "first_token" ? Effect.raceFirst(nap, Deferred.await(firstContent)) : nap
    }
  })

const deliveryStopReason = (error: DeliveryError): StopReason =>
  error.reason === "failed" ? "unknown" : error.reason

/**
 * Stage 01 (spec §4): consume one `LanguageModel.stream(request)`. Text goes to the
 * ResponseSink as it arrives; the pass ends on the first tool call (after flushing), on
 * completion, on a provider error, on a stop or follow-up request, or when the first-token /
 * inactivity budget runs out. Never fails: every ending is a PassResult.
 */
export const streamOnce = Effect.fn("streamOnce")(function*(input: StreamOnceInput) {
  const model = yield* LanguageModel
  const sink = yield* ResponseSink
  const signals = yield* TurnSignals
  const config = yield* LoopConfig

  // A stop or follow-up that arrived between passes ends this one before it starts.
  const pending = yield* signals.current
  if (Option.isSome(pending)) {
    return pending.value._tag === "Stop"
      ? PassResult.StoppedByUser({ accumulatedText: "", stopReason: "user_request" })
      : PassResult.FollowUpInterrupt({ accumulatedText: "" })
  }

  const deliveredBefore = (yield* sink.delivered).length
  const state = yield* Ref.make(initialState)
  const echo = yield* Ref.make(startEcho(input.request.assistantPrefill))
  const startedAt = yield* Clock.currentTimeMillis
  const deadline = yield* Ref.make<Deadline>({
    at: startedAt + Duration.toMillis(config.firstTokenTimeout),
    phase: "first_token"
  })
  const stopPulling = yield* Deferred.make<void>()
  const firstContent = yield* Deferred.make<void>()

  const onEvent = (event: ProviderEvent): Effect.Effect<void, DeliveryError> =>
    Effect.gen(function*() {
      if (isContent(event)) {
        // First content ends the first-token budget; every later one re-arms the inactivity budget.
        const now = yield* Clock.currentTimeMillis
        const next: Deadline = { at: now + Duration.toMillis(config.streamInactivityTimeout), phase: "idle" }
        yield* Ref.set(deadline, next)
        yield* Ref.update(state, (s) => (s.sawContent ? s : { ...s, sawContent: true }))
        yield* Deferred.succeed(firstContent, undefined)
      }
      switch (event._tag) {
        case "TextDelta": {
          const deliverable = yield* Ref.modify(echo, (current) => feedEcho(current, event.text))
          if (deliverable.length > 0) yield* sink.write(deliverable)
          return
        }
        case "ReasoningDelta":
          return yield* Ref.update(state, (s) => ({ ...s, reasoning: s.reasoning + event.text }))
        case "ToolCall":
          return yield* Ref.update(state, (s) => ({ ...s, call: event.call }))
        case "Usage":
          return yield* Ref.update(state, (s) => ({ ...s, usage: event.usage }))
        case "Finish":
          return yield* Ref.update(state, (s) => ({ ...s, finishReason: event.reason }))
        case "KeepAlive":
          return
      }
    })

  const consumer = yield* model.stream(input.request).pipe(
    // Settling after a timeout stops the provider but lets an in-flight delivery finish.
    Stream.interruptWhen(Deferred.await(stopPulling)),
    Stream.takeUntil((event) => event._tag === "ToolCall"),
    Stream.runForEach(onEvent),
    Effect.fork
  )

  const ending: Ending = yield* Effect.raceAll([
    Effect.map(Fiber.await(consumer), (exit): Ending => ({ _tag: "Ended", exit })),
    Effect.map(watchdog(deadline, firstContent), (phase): Ending => ({ _tag: "TimedOut", phase })),
    Effect.map(signals.awaitRequest, (request): Ending => ({ _tag: "Requested", request }))
  ])

  /** Ends the pass on the sink; if the sink broke, what it delivered this pass is still known. */
  const endPass = (mode: "flush" | "discard") =>
    sink.endPass(mode).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.logWarning(`response sink failed while ending the pass: ${error.detail}`),
          Effect.map(sink.delivered, (all) => all.slice(deliveredBefore))
        )
      )
    )

  const common = Effect.map(Ref.get(state), (s) => ({
    ...(s.usage === undefined ? {} : { usage: s.usage }),
    ...(s.reasoning.length === 0 ? {} : { thoughtLog: { raw: s.reasoning } })
  }))

  const stopped = Effect.gen(function*() {
    yield* Fiber.interrupt(consumer)
    const accumulatedText = yield* endPass("flush")
    return PassResult.StoppedByUser({ ...(yield* common), accumulatedText, stopReason: "user_request" })
  })

  const timedOut = (phase: Phase) =>
    Effect.gen(function*() {
      // A stop registered meanwhile wins over the timeout, without waiting to settle.
      const request = yield* signals.current
      if (Option.isSome(request) && request.value._tag === "Stop") return yield* stopped
      yield* Deferred.succeed(stopPulling, undefined)
      const settled = yield* Fiber.await(consumer).pipe(Effect.timeout(config.abandonedSettleTimeout), Effect.option)
      if (Option.isNone(settled)) yield* Fiber.interruptFork(consumer)
      const accumulatedText = yield* endPass("flush")
      const { sawContent } = yield* Ref.get(state)
      yield* Effect.logWarning(`stream ${phase === "first_token" ? "first-token" : "inactivity"} timeout`).pipe(
        Effect.annotateLogs({ provider: input.attempt.provider, model: input.attempt.model, phase, sawProgress: sawContent })
      )
      // Suppressed: the outer tier keeps the notice and sends it at finalize if nothing later answered.
      if (!input.attempt.suppressUserErrors) {
        yield* sink.notice(UserNotice.StreamTimeout({ provider: input.attempt.provider, phase }))
      }
      return PassResult.Timeout({ ...(yield* common), accumulatedText, phase, sawProgress: sawContent })
    })

  switch (ending._tag) {
    case "TimedOut":
      return yield* timedOut(ending.phase)
    case "Requested": {
      if (ending.request._tag === "Stop") return yield* stopped
      yield* Fiber.interrupt(consumer)
      // A newer message supersedes this reply: what is still buffered is dropped.
      const accumulatedText = yield* endPass("discard")
      return PassResult.FollowUpInterrupt({ ...(yield* common), accumulatedText })
    }
    case "Ended": {
      const exit = ending.exit
      if (Exit.isFailure(exit)) {
        const error = Cause.failureOption(exit.cause)
        // Defects are bugs: they propagate (the outer tier turns them into an `error` turn).
        if (Option.isNone(error)) return yield* Effect.die(Cause.squash(exit.cause))
        const reason = error.value
        if (reason instanceof DeliveryError) {
          // The destination broke: nothing more can be shown, so the pass ends here.
          const accumulatedText = yield* endPass("discard")
          return PassResult.Completed({ ...(yield* common), accumulatedText, stopReason: deliveryStopReason(reason) })
        }
        if (reason instanceof ProviderError && reason.reason === "Stalled") {
          const { sawContent } = yield* Ref.get(state)
          return yield* timedOut(sawContent ? "idle" : "first_token")
        }
        const accumulatedText = yield* endPass("flush")
        return PassResult.Error({ ...(yield* common), accumulatedText, error: reason })
      }
      const accumulatedText = yield* endPass("flush")
      const s = yield* Ref.get(state)
      if (s.call !== undefined) return PassResult.FunctionCall({ ...(yield* common), accumulatedText, call: s.call })
      if (accumulatedText.trim().length === 0) {
        return PassResult.EmptyResponse({
          ...(yield* common),
          accumulatedText,
          ...(s.finishReason === undefined ? {} : { finishReason: s.finishReason })
        })
      }
      return PassResult.Completed({ ...(yield* common), accumulatedText })
    }
  }
})
