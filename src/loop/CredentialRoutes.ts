import { Context, Data, Effect, Option, type Redacted } from "effect"

/**
 * The credentials of one turn, as a front resolves them: the user's personal key, the
 * facts that withhold the server route, and the server route itself, materialized only when asked
 * (it may open a sealed key). The loop decides what to do with them (`turnRoutes`).
 */

/** What the server route pays with: the key a server admin set, or the operator's pool (`LLM_API_KEYS`). */
export type ServerCredential = Data.TaggedEnum<{
  ServerKey: { readonly key: Redacted.Redacted<string> }
  OperatorPool: {}
}>
export const ServerCredential = Data.taggedEnum<ServerCredential>()

/** The server route could not be prepared (the store failed): the turn goes on without it. */
export class CredentialRouteError extends Data.TaggedError("CredentialRouteError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

export interface TurnCredentials {
  /** The user's own key, when one is stored and opens. */
  readonly personalKey: Option.Option<Redacted.Redacted<string>>
  /** The server's capability `user_byok_mode`: every user brings their own key; the server's is never used. */
  readonly userByokMode: boolean
  /** The user's `/key optout`: when their key fails, do not fall back to the server's. */
  readonly serverRouteOptOut: boolean
  /** The server route; run at most once per turn, and only when it is needed. */
  readonly serverCredential: Effect.Effect<ServerCredential, CredentialRouteError>
  /** Tells the user privately that the provider refused their personal key (HTTP 401/402/403). */
  readonly personalKeyRefused: (status: number | undefined) => Effect.Effect<void>
}

/** Who a turn is for. */
export interface CredentialOwner {
  readonly guildId: string | undefined
  readonly userId: string
}

export interface CredentialRoutesShape {
  /** Never fails: a store that cannot answer is the implementation's to report (and to fall back from). */
  readonly forTurn: (owner: CredentialOwner) => Effect.Effect<TurnCredentials>
}

/** No personal or server keys: every turn runs on the operator's pool (the terminal, tests of other modules). */
const operatorOnly: TurnCredentials = {
  personalKey: Option.none(),
  userByokMode: false,
  serverRouteOptOut: false,
  serverCredential: Effect.succeed(ServerCredential.OperatorPool()),
  personalKeyRefused: () => Effect.void
}

export const CredentialRoutes = Context.Reference<CredentialRoutesShape>("loopcord/loop/CredentialRoutes", {
  defaultValue: () => ({ forTurn: () => Effect.succeed(operatorOnly) })
})
