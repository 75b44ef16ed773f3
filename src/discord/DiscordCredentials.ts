import { Effect, FiberSet, Layer } from "effect"
import { CredentialRoutes } from "../loop/CredentialRoutes"
import type { CredentialStore } from "../store/CredentialStore"
import type { GuildSettingsStore } from "../store/GuildSettingsStore"
import { CredentialProblem, makeStoreCredentialRoutes } from "../store/StoreCredentialRoutes"
import { DiscordClient, NO_MENTIONS } from "./DiscordClient"
import { clip, DiscordLimit } from "./discordLimits"

/** What the owner of a key reads in their DMs (pure; never a key value, never the vendor's text). */
export const credentialProblemText: (problem: CredentialProblem) => string = CredentialProblem.$match({
  PersonalKeyRefused: ({ status }) =>
    `🔑 The model provider refused your personal API key${status === undefined ? "" : ` (HTTP ${status})`}: it may be wrong, revoked or out of credit. ` +
    "Set a new one with `/key personal`, or remove it with `/key clear scope:personal`. " +
    "Meanwhile the server's key answers for you where the server allows it (unless you chose `/key optout`).",
  PersonalKeyUnusable: () =>
    "🔑 The bot can no longer read the personal API key you stored (its operator changed the key it seals secrets with), so it is not used. " +
    "Set it again with `/key personal`.",
  ServerKeyUnusable: ({ guildId }) =>
    `🔑 The bot can no longer read the API key you set for a server (id ${guildId}): its operator changed the key it seals secrets with. ` +
    "The operator's keys answer meanwhile; set the server's key again there with `/key server`."
})

/**
 * The loop's `CredentialRoutes` for the Discord front: keys and settings from the stores, problems
 * with a key told to its owner by DM. A DM is sent beside the turn (never holding it up); one that
 * Discord refuses (DMs closed) is logged.
 */
export const DiscordCredentialRoutes: Layer.Layer<never, never, DiscordClient | CredentialStore | GuildSettingsStore> =
  Layer.effect(
    CredentialRoutes,
    Effect.gen(function*() {
      const client = yield* DiscordClient
      const run = yield* FiberSet.makeRuntime<never>()
      const directMessage = (userId: string, problem: CredentialProblem) =>
        Effect.tryPromise(() =>
          client.users.send(userId, { content: clip(credentialProblemText(problem), DiscordLimit.content), allowedMentions: NO_MENTIONS })
        ).pipe(
          Effect.tap(() => Effect.logInfo(`told a key owner privately: ${problem._tag}`).pipe(Effect.annotateLogs({ userId }))),
          Effect.catch((error) =>
            Effect.logWarning(`could not DM a key owner about ${problem._tag}: ${error.message}`).pipe(Effect.annotateLogs({ userId }))
          )
        )
      return yield* makeStoreCredentialRoutes((userId, problem) => Effect.sync(() => {
        run(directMessage(userId, problem))
      }))
    })
  )
