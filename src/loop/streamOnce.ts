import { Cause, Channel, Clock, Duration, Effect, Exit, Fiber, Option, Pull, Ref, Result, Scope, Stream } from "effect"
import { DeliveryError, ResponseSink } from "./ResponseSink"
import { UserNotice } from "./UserNotice"
import { LoopConfig } from "../config/LoopConfig"
import type { FunctionCall } from "../domain/FunctionCall"
import { PassResult, type StopReason } from "../domain/PassResult"
import { ProviderError } from "../domain/ProviderError"
import { type FinishReason, type ProviderEvent } from "../domain/ProviderEvent"
import type { TokenUsage } from "../domain/TokenUsage"
import type { GenerationRequest } from "../provider/GenerationRequest"
import { LanguageModel } from "../provider/LanguageModel"
import { type AttemptInfo, personalVariant } from "./AttemptInfo"
import { makeFirstWins } from "./FirstWins"
import { addReasoning, DEFAULT_REPLY_CAPACITY, headOf, logPassCut, type PassCut, REPLY_CUT_MARKER } from "./passCaps"
import { longestNap } from "./TurnAlarm"
import { feedEcho, startEcho } from "./PrefillEcho"
import { type TurnRequest, TurnSignals } from "./TurnSignals"

interface StreamOnceInput {
  readonly request: GenerationRequest
  readonly attempt: AttemptInfo
  /**
   * Text already shown that this pass continues, whichever way the request carries
   * it (a trailing assistant message or an instruction): the output that repeats it is dropped.
   * Default: the request's `assistantPrefill`.
   */
  readonly continuing?: string
}

/** What the consumer of one provider stream has seen so far (content: the deadline's phase). */
interface PassState {
  readonly usage: TokenUsage | undefined
  readonly finishReason: FinishReason | undefined
  /** Every call the pass made, in order, up to the collection ceiling. */
  readonly calls: ReadonlyArray<FunctionCall>
  readonly reasoning: string
  /** NovelAI scene metadata and held-back fragment: hidden, carried on the PassResult. */
  readonly details: ReadonlyArray<string>
  readonly fragment: string | undefined
  /** The pass stopped reading at a cap (reasoning, reply text, or the tool calls collected). */
  readonly cut: PassCut | "tool_calls" | undefined
}

const initialState: PassState = {
  usage: undefined,
  finishReason: undefined,
  calls: [],
  reasoning: "",
  details: [],
  fragment: undefined,
  cut: undefined
}

type Phase = "first_token" | "idle"

interface Deadline {
  readonly at: number
  readonly phase: Phase
}

/**
 * The consumer between pulls and deliveries. A timeout moves it to `stop`: a consumer that was
 * pulling is interrupted at once (the provider is stopped); one that was delivering finishes
 * that delivery first and then ends by itself.
 */
type ConsumerPhase = "pulling" | "delivering" | "stop"

const enterDelivery = (phase: ConsumerPhase): [boolean, ConsumerPhase] =>
  phase === "stop" ? [false, phase] : [true, "delivering"]
const leaveDelivery = (phase: ConsumerPhase): [boolean, ConsumerPhase] =>
  phase === "stop" ? [false, phase] : [true, "pulling"]

/** How the race around the provider stream ended. */
type Ending =
  | { readonly _tag: "Ended"; readonly exit: Exit.Exit<void, ProviderError | DeliveryError> }
  | { readonly _tag: "TimedOut"; readonly phase: Phase }
  | { readonly _tag: "Requested"; readonly request: TurnRequest }

/** While text is being delivered the provider is not timed (a slow destination is not a stall). */
const PAUSED: Deadline = { at: Number.POSITIVE_INFINITY, phase: "idle" }

const deliveryStopReason = (error: DeliveryError): StopReason =>
  error.reason === "failed" ? "unknown" : error.reason

/**
 * Stage 01: consume one `LanguageModel.stream(request)`. Text goes to the ResponseSink as it
 * arrives and every tool call is collected; the pass ends when the stream does (with its calls,
 * if it made any), on a provider error, on a stop or follow-up request, or when the first-token /
 * inactivity budget runs out. Never fails: every ending is a PassResult.
 */
// Untraced: it runs once per model call, and a span per call is pure overhead with no tracer installed.
export const streamOnce = Effect.fnUntraced(function*(
  input: StreamOnceInput
): Effect.fn.Return<PassResult, never, LanguageModel | ResponseSink | TurnSignals | LoopConfig> {
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
  // Reply text this pass may still show; past it the reply is cut and reading stops.
  let room = (sink.capacity ?? DEFAULT_REPLY_CAPACITY) - deliveredBefore
  // Written only by the consumer fiber, one event at a time; read by this fiber once the
  // consumer has ended or was stopped. Plain fields: a Ref per event cost an op (and an
  // allocation) for state no other fiber writes.
  const state: { -readonly [K in keyof PassState]: PassState[K] } & { details: Array<string>; calls: Array<FunctionCall> } = {
    ...initialState,
    details: [],
    calls: []
  }
  // Calls past the per-pass cap are still collected so each gets its refusal, but only so many:
  // a stream that never stops calling must not grow the pass without bound.
  const collectedCallsCeiling = callsCollectedPerPass(config.maxToolCallsPerPass)
  let echo = startEcho(input.continuing ?? input.request.assistantPrefill)
  const startedAt = yield* Clock.currentTimeMillis
  const inactivityMs = Duration.toMillis(config.streamInactivityTimeout)
  // Written by the consumer, read by the turn's alarm when it wakes. Re-arming only moves the
  // deadline later, except at the first content and at the end of a delivery, which bring it to
  // one inactivity budget from then: never before the end of the alarm's current nap.
  let deadline: Deadline = { at: startedAt + Duration.toMillis(config.firstTokenTimeout), phase: "first_token" }
  const setDeadline = (next: Deadline) =>
    Effect.sync(() => {
      deadline = next
    })
  // Where the consumer is, so a timeout can stop the provider without cutting a delivery short.
  const consumerPhase = yield* Ref.make<ConsumerPhase>("pulling")
  const beginDelivery = Ref.modify(consumerPhase, enterDelivery)
  const endDelivery = Ref.modify(consumerPhase, leaveDelivery)

  // First content ends the first-token budget; every later one re-arms the inactivity budget.
  const rearm = Effect.flatMap(Clock.currentTimeMillis, (now) => setDeadline({ at: now + inactivityMs, phase: "idle" }))

  /** Applies an event that shows nothing; true when it was content (it re-arms the budget). */
  const absorb = (event: ProviderEvent): boolean => {
    switch (event._tag) {
      case "ReasoningDelta": {
        const kept = addReasoning(state.reasoning, event.text, config.maxReasoningChars)
        state.reasoning = kept.text
        if (kept.cut) state.cut = "reasoning"
        return true
      }
      case "ToolCall":
        state.calls.push(event.call)
        if (state.calls.length >= collectedCallsCeiling) state.cut = "tool_calls"
        return true
      case "Usage":
        state.usage = event.usage
        return true
      case "Finish":
        state.finishReason = event.reason
        return true
      // NovelAI: never shown, only carried on the PassResult.
      case "SceneDetails":
        state.details.push(event.text)
        return true
      case "ContinuationFragment":
        state.fragment = event.text
        return true
      case "TextDelta":
        return true
      case "KeepAlive":
        return false
    }
  }

  /**
   * Delivers one text delta (after the prefill echo guard). The alarm times the provider
   * only: the budget is paused during the write and starts again once it is done. False when a
   * timeout stopped the pass meanwhile.
   */
  const deliver = (text: string): Effect.Effect<boolean, DeliveryError> =>
    Effect.flatMap(beginDelivery, (open) =>
      !open ? Effect.succeed(false) : Effect.andThen(
        Effect.andThen(setDeadline(PAUSED), sink.write(text)),
        Effect.tap(endDelivery, rearm)
      ))

  // One fiber pulls the provider stream chunk by chunk and delivers each event, to the end of the
  // stream: a pass may make several calls, and text after a call is shown like any other. The
  // collection ceiling of calls stops the reading early. The stream's scope is closed on every
  // path: as an interruption on a kill, as a normal end when a timeout stopped the pass.
  // Events that show nothing are applied synchronously: the consumer only suspends to pull and
  // to write, so a timeout can only land there (and is seen right after).
  //
  // The channel's own pull, in the stream's scope (Stream.toPull would wrap every pull in more
  // steps, and Scope.extend copy the turn's context): each pull yields a non-empty array of
  // events and fails with Cause.Done at the end, which ends the loop and is caught once, outside it.
  const streamScope = yield* Scope.make()
  const closeStream = (exit: Exit.Exit<void, ProviderError | DeliveryError>) =>
    Effect.flatMap(Ref.get(consumerPhase), (phase) => Scope.close(streamScope, phase === "stop" ? Exit.void : exit))
  const consume: Effect.Effect<void, ProviderError | DeliveryError> = Pull.catchDone(Effect.gen(function*() {
    const pull = yield* Channel.toPullScoped(Stream.toChannel(model.stream(input.request)), streamScope)
    while (true) {
      const chunk = yield* pull
      if ((yield* Ref.get(consumerPhase)) === "stop") return
      let content = false
      for (const event of chunk) {
        if (event._tag === "TextDelta") {
          const [deliverable, next] = feedEcho(echo, event.text)
          echo = next
          if (deliverable.length > room) {
            // More than the destination can show: what fits, the marker, and no further reading.
            state.cut = "reply"
            yield* deliver(headOf(deliverable, room) + REPLY_CUT_MARKER)
            return
          }
          if (deliverable.length > 0) {
            room -= deliverable.length
            if (!(yield* deliver(deliverable))) return
            content = false
            continue
          }
        }
        if (absorb(event)) content = true
        if (state.cut !== undefined) return
      }
      if (content) yield* rearm
    }
  }), () => Effect.void)

  // Whichever comes first ends the wait: the consumer (after its stream closed), the deadline, a
  // stop or follow-up. Only the consumer is a fiber of this pass: the deadline is watched by the
  // turn's alarm and a request is heard by a listener, both disarmed once it is decided.
  const first = makeFirstWins<Ending>()
  const consumer = yield* Effect.forkChild(
    Effect.onExit(consume, (exit) => Effect.andThen(closeStream(exit), Effect.sync(() => first.settle({ _tag: "Ended", exit }))))
  )
  const disarm = yield* signals.alarm.arm(() => deadline.at, longestNap(config), () => first.settle({ _tag: "TimedOut", phase: deadline.phase }))
  const stopListening = yield* signals.onRequest((request) => first.settle({ _tag: "Requested", request }))
  const ending = yield* Effect.ensuring(first.await, Effect.sync(() => {
    stopListening()
    disarm()
  }))

  /** What the sink delivered during this pass, whatever happened to it. */
  const deliveredThisPass = Effect.map(sink.delivered, (all) => all.slice(deliveredBefore))

  /**
   * Ends a pass that is already ending for another reason (stop, follow-up, timeout): if the
   * sink broke meanwhile, what it delivered this pass is still known, and the next turn or
   * attempt meets the broken destination itself.
   */
  const endPass = (mode: "flush" | "discard") =>
    sink.endPass(mode).pipe(
      Effect.catch((error) =>
        Effect.andThen(Effect.logWarning(`response sink failed while ending the pass: ${error.detail}`), deliveredThisPass)
      )
    )

  const common = Effect.sync(() => ({
    ...(state.usage === undefined ? {} : { usage: state.usage }),
    ...(state.reasoning.length === 0 ? {} : { thoughtLog: { raw: state.reasoning } }),
    ...(state.details.length === 0 ? {} : { detailsContent: state.details.join("\n\n") }),
    ...(state.fragment === undefined ? {} : { naiContinuationPrefill: state.fragment })
  }))

  /** The destination refused the reply for good: never reported as an answer. */
  const deliveryFailed = (error: DeliveryError): Effect.Effect<PassResult> =>
    Effect.gen(function*() {
      yield* Effect.logError(`reply delivery failed for good (${error.reason}): ${error.detail}`).pipe(
        Effect.annotateLogs({ provider: input.attempt.provider, model: input.attempt.model })
      )
      return PassResult.DeliveryFailed({ ...(yield* common), accumulatedText: yield* deliveredThisPass, stopReason: deliveryStopReason(error), error })
    })

  /** Ends a pass whose outcome is decided by what it produced: a sink failure now fails the pass. */
  const settle = (mode: "flush" | "discard", done: (accumulatedText: string) => Effect.Effect<PassResult>): Effect.Effect<PassResult> =>
    Effect.flatMap(Effect.result(sink.endPass(mode)), (ended) => Result.isFailure(ended) ? deliveryFailed(ended.failure) : done(ended.success))

  /** Interrupts the consumer without waiting for it (its stream's finalizers may be slow). */
  const interruptInBackground = Effect.withFiber((self) => {
    consumer.interruptUnsafe(self.id)
    return Effect.void
  })

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
      // Settling stops the provider at once but lets an in-flight delivery finish.
      if ((yield* Ref.getAndSet(consumerPhase, "stop")) === "delivering") yield* Scope.close(streamScope, Exit.void)
      else yield* interruptInBackground
      const settled = yield* Effect.timeoutOption(Fiber.await(consumer), config.abandonedSettleTimeout)
      if (Option.isNone(settled)) yield* interruptInBackground
      const accumulatedText = yield* endPass("flush")
      const sawContent = deadline.phase === "idle"
      yield* Effect.logWarning(`stream ${phase === "first_token" ? "first-token" : "inactivity"} timeout`).pipe(
        Effect.annotateLogs({ provider: input.attempt.provider, model: input.attempt.model, phase, sawProgress: sawContent })
      )
      // Suppressed: the outer tier keeps the notice and sends it at finalize if nothing later answered.
      if (!input.attempt.suppressUserErrors) {
        yield* sink.notice(UserNotice.StreamTimeout({ provider: input.attempt.provider, phase, ...personalVariant(input.attempt) }))
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
        const error = Cause.findErrorOption(exit.cause)
        // Defects are bugs: they propagate (the outer tier turns them into an `error` turn).
        if (Option.isNone(error)) return yield* Effect.die(Cause.squash(exit.cause))
        const reason = error.value
        // The destination broke mid-stream: nothing more can be shown.
        if (reason instanceof DeliveryError) return yield* deliveryFailed(reason)
        if (reason instanceof ProviderError && reason.reason === "Stalled") {
          return yield* timedOut(deadline.phase)
        }
        return yield* settle("flush", (accumulatedText) =>
          Effect.map(common, (shared) => PassResult.Error({ ...shared, accumulatedText, error: reason })))
      }
      const s = state
      if (s.cut === "tool_calls") yield* logCallsCut(s.calls.length, input.attempt)
      else if (s.cut !== undefined) yield* logPassCut(s.cut, input.attempt)
      return yield* settle("flush", (accumulatedText) =>
        Effect.map(common, (shared) => {
          // A call without a usable name is still a call: executeToolCall refuses it (`error`).
          if (s.calls.length > 0) return PassResult.FunctionCall({ ...shared, accumulatedText, calls: s.calls })
          if (accumulatedText.trim().length === 0) {
            // Reasoning that never ended is an answer cut short, never one that may settle.
            if (s.cut === "reasoning") return PassResult.EmptyResponse({ ...shared, accumulatedText, finishReason: "length", emptyResponseReason: "reasoning_limit" })
            return PassResult.EmptyResponse({
              ...shared,
              accumulatedText,
              ...(s.finishReason === undefined ? {} : { finishReason: s.finishReason })
            })
          }
          return PassResult.Completed({ ...shared, accumulatedText, ...(s.cut === "reply" ? { stopReason: "send_message_limit" as const } : {}) })
        }))
    }
  }
})

/** How many calls one pass collects at most: the cap run, and as many again three times over refused. */
const callsCollectedPerPass = (maxToolCallsPerPass: number): number => maxToolCallsPerPass * 4

const logCallsCut = (collected: number, attempt: AttemptInfo) =>
  Effect.logWarning(`the pass made ${collected} tool calls, the most one pass collects: reading stopped there`).pipe(
    Effect.annotateLogs({ provider: attempt.provider, model: attempt.model })
  )
