import { Clock, Data, Effect, Option, Ref } from "effect"
import {
  CredentialRouteError,
  type CredentialOwner,
  type CredentialRoutesShape,
  ServerCredential,
  type TurnCredentials
} from "../loop/CredentialRoutes"
import { CredentialStore, type StoredKey } from "./CredentialStore"
import { GuildSettingsStore } from "./GuildSettingsStore"

/**
 * The loop's `CredentialRoutes` over the stores: the user's personal key, the server's key (read
 * only when the server route is materialized), `user_byok_mode` and the user's opt-out. A key
 * that does not open is skipped, logged without its value and reported to its owner privately;
 * a store that does not answer is logged and the turn runs as if nothing were set.
 */

/** What an owner of a key is told privately (a DM on Discord). */
export type CredentialProblem = Data.TaggedEnum<{
  /** The provider refused the user's personal key (HTTP 401/402/403). */
  PersonalKeyRefused: { readonly status: number | undefined }
  /** The user's stored key does not open (sealed under a key this bot no longer has). */
  PersonalKeyUnusable: {}
  /** The server's stored key does not open; told to the admin who set it. */
  ServerKeyUnusable: { readonly guildId: string }
}>
export const CredentialProblem = Data.taggedEnum<CredentialProblem>()

/** Tells a user about a problem with their key, privately; never fails, never holds up the turn. */
type TellOwner = (userId: string, problem: CredentialProblem) => Effect.Effect<void>

/** The same problem is told to the same owner at most once per this window. */
const TELL_OWNER_WINDOW_MS = 60 * 60 * 1000
/** Bound of the remembered (owner, problem) pairs. */
const MAX_REMEMBERED = 10_000

export const makeStoreCredentialRoutes = (tellOwner: TellOwner) =>
  Effect.gen(function* () {
    const store = yield* CredentialStore
    const settings = yield* GuildSettingsStore
    const told = yield* Ref.make<ReadonlyMap<string, number>>(new Map())

    /** Tells the owner unless the same problem with the same stored key was told to them within the window. */
    const tellOnce = (userId: string, problem: CredentialProblem, keyVersion: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const key = `${problem._tag}:${userId}:${keyVersion}`
        const fresh = yield* Ref.modify(told, (all): readonly [boolean, ReadonlyMap<string, number>] => {
          const last = all.get(key)
          if (last !== undefined && now - last < TELL_OWNER_WINDOW_MS) return [false, all]
          const kept = [...all].filter(([, at]) => now - at < TELL_OWNER_WINDOW_MS).slice(-(MAX_REMEMBERED - 1))
          return [true, new Map([...kept, [key, now]])]
        })
        if (fresh) yield* tellOwner(userId, problem)
      })

    const keyOf = (kind: "user" | "guild", id: string) =>
      store.getKey({ kind, id }).pipe(
        Effect.catch((error) =>
          Effect.as(Effect.logWarning(`stored ${kind === "user" ? "personal" : "server"} key unavailable: ${error.message}`), undefined)
        )
      )

    const personalKey = (userId: string, stored: StoredKey | undefined) =>
      Effect.gen(function* () {
        if (stored === undefined || stored._tag === "None") return Option.none()
        if (stored._tag === "Usable") return Option.some({ key: stored.key, version: String(stored.updatedAt) })
        yield* Effect.logWarning(`the personal API key of a user does not open (${stored.reason}); it is not used`).pipe(
          Effect.annotateLogs({ userId })
        )
        yield* tellOnce(userId, CredentialProblem.PersonalKeyUnusable(), String(stored.updatedAt))
        return Option.none()
      })

    const serverCredential = (guildId: string | undefined) =>
      Effect.gen(function* () {
        if (guildId === undefined) return ServerCredential.OperatorPool()
        const stored = yield* store.getKey({ kind: "guild", id: guildId }).pipe(
          Effect.mapError((error) => new CredentialRouteError({ detail: `the server's key could not be read: ${error.message}` }))
        )
        switch (stored._tag) {
          case "None":
            return ServerCredential.OperatorPool()
          case "Usable":
            return ServerCredential.ServerKey({ key: stored.key })
          case "Unusable":
            yield* Effect.logWarning(`the server's API key does not open (${stored.reason}); the operator's pool answers`).pipe(
              Effect.annotateLogs({ guildId })
            )
            yield* tellOnce(stored.setBy, CredentialProblem.ServerKeyUnusable({ guildId }), `${guildId}:${stored.updatedAt}`)
            return ServerCredential.OperatorPool()
        }
      })

    const flag = (what: string, lookup: Effect.Effect<boolean, { readonly message: string }>) =>
      lookup.pipe(Effect.catch((error) => Effect.as(Effect.logWarning(`${what} unavailable, assumed off: ${error.message}`), false)))

    const forTurn = (owner: CredentialOwner) =>
      Effect.gen(function* () {
        // Asked side by side: a database that does not answer costs one STORE_TIMEOUT_MS, not three.
        const { optOut, stored, userByokMode } = yield* Effect.all({
          stored: keyOf("user", owner.userId),
          userByokMode: owner.guildId === undefined
            ? Effect.succeed(false)
            : flag("user_byok_mode", settings.isEnabled(owner.guildId, "user_byok_mode")),
          optOut: flag("the server-route opt-out", store.serverRouteOptOut(owner.userId))
        }, { concurrency: "unbounded" })
        const personal = yield* personalKey(owner.userId, stored)
        const serverRouteOptOut = Option.isSome(personal) && optOut
        const credentials: TurnCredentials = {
          personalKey: Option.map(personal, ({ key }) => key),
          userByokMode,
          serverRouteOptOut,
          serverCredential: serverCredential(owner.guildId),
          personalKeyRefused: (status) =>
            tellOnce(owner.userId, CredentialProblem.PersonalKeyRefused({ status }), Option.match(personal, { onNone: () => "", onSome: ({ version }) => version }))
        }
        return credentials
      })

    return { forTurn } satisfies CredentialRoutesShape
  })
