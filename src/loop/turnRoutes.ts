import { Effect, Exit, Option, Ref, Result } from "effect"
import type { CredentialSource } from "../domain/CredentialSource"
import type { TurnStatus } from "../domain/PassResult"
import type { ProviderError } from "../domain/ProviderError"
import type { TurnResult } from "../domain/TurnResult"
import { type CredentialRoute, operatorRoute, singleKeyRoute } from "./CredentialRoute"
import { CredentialRoutes, ServerCredential, type TurnCredentials } from "./CredentialRoutes"
import { CurrentTurn } from "./CurrentTurn"
import { KeyPool } from "./KeyPool"
import { ResponseSink } from "./ResponseSink"
import { RoutePlan } from "./RoutePlan"
import { ServerAdmission } from "./ServerAdmission"
import { UsageLedger } from "./UsageLedger"
import { UserNotice } from "./UserNotice"

/**
 * The route layer of the outer tier: which credentials
 * a turn's attempts run on. A user with a personal key runs the planned attempts (every model) on
 * it; only when they all failed retryably is the server route materialized, once, admitted
 * (cooldown, then quotas) and appended: its models on the server's key, or on the operator's pool
 * when the server set none. A turn without a personal key runs on the server route from the start,
 * admitted first. Per route, runGenerationTurn's model × key logic is unchanged.
 */

/** One planned attempt: a model on a route. */
export interface AttemptSlot {
  readonly model: string
  readonly route: CredentialRoute
}

export interface TurnRoutes {
  /** Every model of the plan on the turn's first route. */
  readonly planned: ReadonlyArray<AttemptSlot>
  /** Whether the server route may still extend the plan (the last planned attempt then stays quiet on failure). */
  readonly mayExtend: Effect.Effect<boolean>
  /**
   * After the last attempt failed retryably: the server route's attempts, decided once (empty when
   * withheld, when it cannot be prepared, or when admission refuses; the earlier failure stands).
   */
  readonly extend: Effect.Effect<ReadonlyArray<AttemptSlot>>
}

/** Why a personal turn gets no server route, if it does not. */
type ServerRouteWithheld = "impersonation" | "user_byok_mode" | "opted_out"

export const serverRouteWithheld = (
  isUserImpersonation: boolean,
  credentials: TurnCredentials
): ServerRouteWithheld | undefined =>
  isUserImpersonation
    ? "impersonation"
    : credentials.userByokMode
    ? "user_byok_mode"
    : credentials.serverRouteOptOut
    ? "opted_out"
    : undefined

/** A server-paid turn counts against the quotas unless it failed altogether (no answer at all). */
export const consumesQuota = (status: TurnStatus): boolean =>
  status !== "error" && status !== "timeout" && status !== "skipped"

/** A 401/402/403 on the user's key: the provider refused the key itself. */
const refusesKey = (error: ProviderError): boolean => error.reason === "Auth"

const refusedResult = (source: CredentialSource): TurnResult => ({
  status: "skipped",
  text: "",
  iterations: 0,
  attempts: [],
  toolCalls: [],
  usage: undefined,
  toolResponseDelivered: false,
  credentialSource: source
})

/**
 * Runs `attempts` over the turn's routes, and afterwards settles the admission (commit, or release
 * when the turn failed altogether or ended abnormally) and records the turn in the usage ledger
 * under its final credential source. A refused server-paid turn makes no attempt and ends `skipped`.
 */
export const withTurnRoutes = <E, R>(attempts: (routes: TurnRoutes) => Effect.Effect<TurnResult, E, R>) =>
  Effect.gen(function*() {
    const turn = yield* CurrentTurn
    const plan = yield* RoutePlan
    const pool = yield* KeyPool
    const sink = yield* ResponseSink
    const admission = yield* ServerAdmission
    const ledger = yield* UsageLedger
    const owner = { guildId: turn.guildId, userId: turn.userId }
    const credentials = yield* (yield* CredentialRoutes).forTurn(owner)
    const surfaced = turn.shouldSurfaceUserErrors && !turn.isUserImpersonation

    const source = yield* Ref.make<CredentialSource>("operator")
    const settleAdmission = yield* Ref.make<Option.Option<(outcome: "commit" | "release") => Effect.Effect<void>>>(Option.none())
    const extension = yield* Ref.make<"pending" | "decided">("decided")

    const slotsOn = (route: CredentialRoute): ReadonlyArray<AttemptSlot> => plan.models.map((model) => ({ model, route }))

    const serverRoute = ServerCredential.$match({
      ServerKey: ({ key }): CredentialRoute => singleKeyRoute("server", key),
      OperatorPool: (): CredentialRoute => operatorRoute(pool, plan.keys)
    })

    /** Asks to spend the server's key: admitted ⇒ the route's source becomes the turn's; refused ⇒ the user is told. */
    const admit = (route: CredentialRoute) =>
      Effect.gen(function*() {
        const answer = yield* admission.admit(owner)
        if (answer._tag === "Refused") {
          yield* Effect.logInfo(`server route refused: ${answer.reason}`).pipe(Effect.annotateLogs({ userId: turn.userId }))
          if (surfaced) yield* sink.notice(UserNotice.ServerRouteRefused({ reason: answer.reason, retryAfterMs: answer.retryAfterMs }))
          return false
        }
        yield* Ref.set(settleAdmission, Option.some(answer.settle))
        yield* Ref.set(source, route.source)
        return true
      })

    const extend = Effect.gen(function*() {
      if ((yield* Ref.getAndSet(extension, "decided")) !== "pending") return []
      const prepared = yield* Effect.result(credentials.serverCredential)
      if (Result.isFailure(prepared)) {
        yield* Effect.logWarning(`the server route could not be prepared; the personal attempts' failure stands: ${prepared.failure.message}`)
        return []
      }
      const route = serverRoute(prepared.success)
      return (yield* admit(route)) ? slotsOn(route) : []
    })

    const routes = (planned: ReadonlyArray<AttemptSlot>): TurnRoutes => ({
      planned,
      mayExtend: Effect.map(Ref.get(extension), (state) => state === "pending"),
      extend
    })

    const planned = yield* Effect.gen(function*() {
      const personalKey = turn.isUserImpersonation ? Option.none() : credentials.personalKey
      if (Option.isSome(personalKey)) {
        const told = yield* Ref.make(false)
        const route = singleKeyRoute("personal", personalKey.value, (error) =>
          refusesKey(error)
            ? Effect.flatMap(Ref.getAndSet(told, true), (already) => (already ? Effect.void : credentials.personalKeyRefused(error.status)))
            : Effect.void)
        yield* Ref.set(source, "personal")
        const withheld = serverRouteWithheld(turn.isUserImpersonation, credentials)
        if (withheld === undefined) yield* Ref.set(extension, "pending")
        else yield* Effect.logDebug(`server route withheld: ${withheld}`)
        return Option.some(slotsOn(route))
      }
      if (credentials.userByokMode) {
        if (surfaced) yield* sink.notice(UserNotice.ServerRouteRefused({ reason: "user_byok_mode", retryAfterMs: undefined }))
        return Option.none()
      }
      const credential = yield* credentials.serverCredential.pipe(
        Effect.catch((error) =>
          Effect.as(
            Effect.logWarning(`the server's key could not be read; the operator's pool answers: ${error.message}`),
            ServerCredential.OperatorPool()
          )
        )
      )
      const route = serverRoute(credential)
      return (yield* admit(route)) ? Option.some(slotsOn(route)) : Option.none()
    })
    if (Option.isNone(planned)) return refusedResult(yield* Ref.get(source))

    const settle = (exit: Exit.Exit<TurnResult, E>) =>
      Effect.flatMap(Ref.get(settleAdmission), (pending) =>
        Option.match(pending, {
          onNone: () => Effect.void,
          onSome: (settleWith) => settleWith(Exit.isSuccess(exit) && consumesQuota(exit.value.status) ? "commit" : "release")
        }))
    const result = yield* attempts(routes(planned.value)).pipe(Effect.onExit(settle))
    const final: TurnResult = { ...result, credentialSource: yield* Ref.get(source) }
    if (final.attempts.length > 0) {
      yield* ledger.record({ ...owner, source: yield* Ref.get(source), usage: final.usage })
    }
    return final
  })
