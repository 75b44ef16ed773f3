import { Cause, Context, Effect, Exit, Option } from "effect"
import type { TurnResult } from "../domain/TurnResult"
import { CurrentTurn, deliberateModeOff, type TurnContextShape } from "../loop/CurrentTurn"
import { type GenerationTurnServices, runGenerationTurn } from "../loop/generationTurn"
import type { ImpersonationAbortedError } from "../loop/ImpersonationAbortedError"
import { StopResponses } from "../loop/StopResponses"
import { TurnSignals, type TurnSignalsShape } from "../loop/TurnSignals"
import { ToolAffordances } from "../tools/ToolAffordances"
import { makeTurnState } from "../tools/TurnState"
import { ContextEnricher } from "./ContextEnricher"
import { ResponseSink } from "../loop/ResponseSink"
import type { TurnInput } from "./TurnInput"

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

/** What the runner provides itself per turn; everything else comes from the app's layers. */
type PerTurn = ResponseSink | CurrentTurn | TurnSignals | StopResponses

export interface RunTurnOptions {
  readonly signals: TurnSignalsShape
  readonly stopResponses: Context.Tag.Service<StopResponses>
  /** The turn waited behind another one in its channel. */
  readonly isFromQueue: boolean
}

/**
 * Runs one turn: opens its sink, builds the turn context and state, runs the generation turn,
 * lets the front finish (drain, mark stopped), and closes the sink's scope on every path.
 */
export class TurnRunner extends Effect.Service<TurnRunner>()("loopcord/chat/TurnRunner", {
  effect: Effect.gen(function*() {
    const services = yield* Effect.context<Exclude<GenerationTurnServices, PerTurn>>()
    const enricher = yield* Effect.serviceOption(ContextEnricher)
    const affordances = Context.get(services, ToolAffordances)

    const run = Effect.fn("TurnRunner.run")(function*(input: TurnInput, options: RunTurnOptions) {
      const { sink, finish } = yield* input.openSink
      const loaded = yield* input.loadContext
      const context = Option.isNone(enricher)
        ? loaded
        : yield* enricher.value.enrich({
          channelId: input.channelId,
          guildId: input.guildId,
          userId: input.userId,
          personaId: input.persona.id
        }, loaded)
      const state = yield* makeTurnState(context)
      const turn: TurnContextShape = {
        channelId: input.channelId,
        guildId: input.guildId,
        userId: input.userId,
        messageId: input.messageId,
        isDM: input.isDM,
        locale: input.locale,
        persona: input.persona,
        isUserImpersonation: input.isUserImpersonation ?? false,
        impersonatedUserId: input.impersonatedUserId,
        shouldSurfaceUserErrors: input.shouldSurfaceUserErrors,
        isFromQueue: options.isFromQueue,
        deliberate: input.deliberate ?? deliberateModeOff,
        state
      }
      // The app's services plus this turn's: a plain Context (building Layers per turn costs more).
      const turnContext = Context.merge(
        services,
        Context.make(ResponseSink, sink).pipe(
          Context.add(CurrentTurn, turn),
          Context.add(TurnSignals, options.signals),
          Context.add(StopResponses, options.stopResponses)
        )
      )
      const exit = yield* runGenerationTurn().pipe(
        Effect.provide(turnContext),
        Effect.annotateLogs({ channelId: input.channelId }),
        Effect.exit
      )
      // Deliberate mode's retention windows count finished turns of the channel.
      yield* affordances.turnEnded(input.channelId)
      // The front finishes its reply on success and on a typed failure (not on interruption).
      if (finish !== undefined && (Exit.isSuccess(exit) || Option.isSome(Cause.failureOption(exit.cause)))) {
        yield* finish(Exit.isSuccess(exit) ? exit.value : abortedResult)
      }
      return yield* exit
    }, Effect.scoped)

    return {
      run: (input: TurnInput, options: RunTurnOptions): Effect.Effect<TurnResult, ImpersonationAbortedError> => run(input, options)
    } as const
  })
}) {}
