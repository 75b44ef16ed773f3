import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import type { TurnResult } from "../domain/TurnResult"
import { deliberateModeOff } from "../domain/DeliberateToolMode"
import { CurrentTurn, type TurnContextShape } from "../loop/CurrentTurn"
import { turnOriginOf } from "../domain/TurnOrigin"
import { type GenerationTurnServices, runGenerationTurn } from "../loop/generationTurn"
import type { ImpersonationAbortedError } from "../loop/ImpersonationAbortedError"
import { StopResponses } from "../loop/StopResponses"
import { makeFirstWins } from "../loop/FirstWins"
import { RoutePlan, withModels } from "../loop/RoutePlan"
import { TurnSignals, type TurnSignalsShape } from "../loop/TurnSignals"
import { ToolAffordances } from "../tools/ToolAffordances"
import { makeTurnState } from "../tools/TurnState"
import { ContextEnricher } from "./ContextEnricher"
import { logTurnSummary } from "./logTurnSummary"
import { ResponseSink } from "../loop/ResponseSink"
import type { TurnInput, TurnSink } from "./TurnInput"
import { TurnObserver } from "./TurnObserver"

/** What the front is told when the turn ended with an error instead of a result. */
const abortedResult: TurnResult = {
  status: "error",
  text: "",
  iterations: 0,
  attempts: [],
  toolCalls: [],
  usage: undefined,
  toolResponseDelivered: false
}

/** A turn /kill ended before its tool loop started: nothing was asked of the model. */
const stoppedBeforeLoop: TurnResult = { ...abortedResult, status: "stopped_by_user" }

/**
 * Runs a stage before the loop (opening the sink, loading the context, memory) until the turn is
 * killed: `None` when the kill came first. The stage runs in a daemon fiber the kill abandons
 * (interrupted in the background), so one that ignores interruption (a hung fetch, a dead
 * database connection) never holds the turn; the kill itself is heard by a signal listener,
 * not by a second fiber.
 */
const untilKilled = <A, E, R>(signals: TurnSignalsShape, stage: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.gen(function*() {
    // None: the kill came first.
    const first = makeFirstWins<Option.Option<Exit.Exit<A, E>>>()
    const running = yield* Effect.forkDetach(stage)
    running.addObserver((exit) => first.settle(Option.some(exit)))
    const stopListening = yield* signals.onKill(() => first.settle(Option.none()))
    const self = yield* Effect.fiberId
    const ended = yield* Effect.ensuring(first.await, Effect.sync(() => {
      stopListening()
      running.interruptUnsafe(self)
    }))
    return Option.isNone(ended) ? Option.none() : Option.some(yield* ended.value)
  })

/** What the runner provides itself per turn; everything else comes from the app's layers. */
type PerTurn = ResponseSink | CurrentTurn | TurnSignals | StopResponses

interface RunTurnOptions {
  readonly signals: TurnSignalsShape
  readonly stopResponses: StopResponses["Service"]
  /** The turn waited behind another one in its channel. */
  readonly isFromQueue: boolean
  /** The turn answers a /kill (queued at the front): it only acknowledges. */
  readonly isStopResponse?: boolean
}

const make = Effect.gen(function*() {
  const services = yield* Effect.context<Exclude<GenerationTurnServices, PerTurn>>()
  const enricher = yield* Effect.serviceOption(ContextEnricher)
  const affordances = Context.get(services, ToolAffordances)
  const observer = yield* TurnObserver

  /** The end of a turn /kill stopped before its loop: the stop response is queued as the loop would. */
  const endBeforeLoop = (input: TurnInput, options: RunTurnOptions, stage: string, finish: TurnSink["finish"]) =>
    Effect.gen(function*() {
      yield* Effect.logInfo(`turn stopped by /kill while ${stage}, before the model was asked`)
      const stop = yield* options.signals.takeStopContext
      yield* Option.match(stop, { onNone: () => options.signals.clearStop, onSome: options.stopResponses.queue })
      yield* affordances.turnEnded(input.channelId)
      if (finish !== undefined) yield* finish(stoppedBeforeLoop)
      return stoppedBeforeLoop
    }).pipe(Effect.annotateLogs({ channelId: input.channelId }))

  const loadContext = (input: TurnInput) =>
    Effect.flatMap(input.loadContext, (loaded) =>
      Option.isNone(enricher) ? Effect.succeed(loaded) : enricher.value.enrich({
        channelId: input.channelId,
        parentChannelId: input.parentChannelId,
        guildId: input.guildId,
        userId: input.userId,
        personaId: input.persona.id
      }, loaded))

  const run = Effect.fn("TurnRunner.run")(function*(input: TurnInput, options: RunTurnOptions) {
    const opened = yield* untilKilled(options.signals, input.openSink)
    if (Option.isNone(opened)) return yield* endBeforeLoop(input, options, "opening the reply", undefined)
    const { finish, mediaOutlet, sink } = opened.value
    const loaded = yield* untilKilled(options.signals, loadContext(input))
    if (Option.isNone(loaded)) return yield* endBeforeLoop(input, options, "loading the context", finish)
    const context = loaded.value
    const state = yield* makeTurnState(context, { mediaOutlet })
    const turn: TurnContextShape = {
      ...turnOriginOf({ ...input, isUserImpersonation: input.isUserImpersonation ?? false, impersonatedUserId: input.impersonatedUserId }),
      shouldSurfaceUserErrors: input.shouldSurfaceUserErrors,
      isFromQueue: options.isFromQueue,
      isStopResponse: options.isStopResponse ?? false,
      deliberate: input.deliberate ?? deliberateModeOff,
      state
    }
    // The app's services plus this turn's: a plain Context (building Layers per turn costs more).
    const perTurn = Context.make(ResponseSink, sink).pipe(
      Context.add(CurrentTurn, turn),
      Context.add(TurnSignals, options.signals),
      Context.add(StopResponses, options.stopResponses)
    )
    // A server's model chain reaches the outer tier as this turn's route plan.
    const turnContext = Context.merge(
      services,
      input.models === undefined ? perTurn : Context.add(perTurn, RoutePlan, withModels(Context.get(services, RoutePlan), input.models))
    )
    const exit = yield* runGenerationTurn().pipe(
      Effect.provide(turnContext),
      Effect.annotateLogs({ channelId: input.channelId }),
      Effect.exit
    )
    if (Exit.isSuccess(exit)) yield* logTurnSummary(exit.value, { channelId: input.channelId })
    // Deliberate mode's retention windows count finished turns of the channel.
    yield* affordances.turnEnded(input.channelId)
    // The front finishes its reply on success and on a typed failure (not on interruption).
    if (finish !== undefined && (Exit.isSuccess(exit) || Option.isSome(Cause.findErrorOption(exit.cause)))) {
      yield* finish(Exit.isSuccess(exit) ? exit.value : abortedResult)
    }
    return yield* exit
  }, Effect.scoped, (running, _input, options) => Effect.ensuring(running, options.signals.alarm.stop))

  return {
    run: (input: TurnInput, options: RunTurnOptions): Effect.Effect<TurnResult, ImpersonationAbortedError> =>
      observer.observe(input, run(input, options))
  } as const
})

/**
 * Runs one turn: opens its sink, builds the turn context and state, runs the generation turn,
 * lets the front finish (drain, mark stopped), and closes the sink's scope on every path. /kill
 * ends it at every stage: before the loop (sink, context, memory) it ends `stopped_by_user` at
 * once, with the stop response queued as the loop would.
 */
export class TurnRunner extends Context.Service<TurnRunner, Effect.Success<typeof make>>()("loopcord/chat/TurnRunner") {
  static readonly Default: Layer.Layer<TurnRunner, never, Exclude<GenerationTurnServices, PerTurn>> = Layer.effect(TurnRunner, make)
}
