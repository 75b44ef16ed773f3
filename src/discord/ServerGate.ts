import type { Message } from "discord.js"
import { Duration, Effect, FiberSet, Option } from "effect"
import { effectiveChain, ModelChoiceConfig } from "../config/ModelChoiceConfig"
import type { Persona } from "../domain/Persona"
import { defaultServerSettings, type ServerSettings, ServerSettingsStore } from "../store/ServerSettingsStore"
import { NO_MENTIONS } from "./DiscordClient"
import { serverAccess } from "./serverAccess"
import type { TriggerReason } from "./triggers"
import { UserRateLimiter } from "./UserRateLimiter"

/** How long the notice about a refused fast message stays before it deletes itself. */
const RATE_NOTICE_LIFETIME = Duration.seconds(15)

/** What a server's settings make of one triggering message it lets through. */
interface ServerTurn {
  readonly persona: Persona
  /** Replies come through a channel webhook as the persona (the operator's or the server's persona name). */
  readonly useWebhooks: boolean
  /** The channel's or the server's model chain; undefined: the operator's. */
  readonly models: ReadonlyArray<string> | undefined
}

/** The persona a server's settings give, field by field over the operator's. */
export const serverPersona = (base: Persona, settings: ServerSettings): Persona => ({
  id: base.id,
  name: settings.persona.name ?? base.name,
  avatarUrl: settings.persona.avatarUrl ?? base.avatarUrl,
  systemPrompt: settings.persona.systemPrompt ?? base.systemPrompt
})

const rateNoticeText = (userId: string, perMinute: number, retryAfterMs: number): string =>
  `⏳ <@${userId}>, you are sending messages faster than this server allows (${perMinute} per minute), ` +
  `so I am not answering them. I can answer again in about ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s.`

/**
 * The server's say over a message that triggers the bot, before any turn is queued: its
 * triggers and access lists, then its per-user rate (a refused message costs no model call; the
 * user is told once, by a notice that deletes itself), then its model chain and persona. A store
 * that cannot be read leaves the operator's defaults (and is logged): the bot keeps answering.
 */
export const makeServerGate = (options: { readonly persona: Persona; readonly personaWebhooks: boolean; readonly rateNoticeLifetime?: Duration.Input }) =>
  Effect.gen(function*() {
    const store = yield* ServerSettingsStore
    const choices = yield* ModelChoiceConfig
    const limiter = yield* UserRateLimiter
    // Notices delete themselves in fibers of the bot's scope.
    const run = yield* FiberSet.makeRuntime<never>()

    const settingsOf = (guildId: string) =>
      store.get(guildId).pipe(
        Effect.catch((error) => Effect.as(Effect.logWarning(`server settings unreadable; the defaults apply: ${error.message}`), defaultServerSettings))
      )

    const channelModels = (guildId: string, message: Message) => {
      const ids = message.channel.isThread() && message.channel.parentId !== null ? [message.channelId, message.channel.parentId] : [message.channelId]
      return store.channelModels(guildId, ids).pipe(
        Effect.catch((error) => Effect.as(Effect.logWarning(`channel model unreadable; the server's applies: ${error.message}`), undefined))
      )
    }

    /** The notice about a refused message: a reply that deletes itself (Discord has no ephemeral replies to messages). */
    const tellRateLimited = (message: Message, perMinute: number, retryAfterMs: number) =>
      Effect.gen(function*() {
        if (!message.channel.isSendable()) return
        const channel = message.channel
        const notice = yield* Effect.tryPromise((): Promise<{ readonly delete: () => Promise<unknown> }> =>
          channel.send({
            content: rateNoticeText(message.author.id, perMinute, retryAfterMs),
            reply: { messageReference: message.id, failIfNotExists: false },
            allowedMentions: NO_MENTIONS
          })
        )
        run(Effect.sleep(options.rateNoticeLifetime ?? RATE_NOTICE_LIFETIME).pipe(
          Effect.andThen(Effect.tryPromise(() => notice.delete())),
          Effect.catch((error) => Effect.logDebug(`rate notice not deleted: ${error.message}`))
        ))
      }).pipe(Effect.catch((error) => Effect.logWarning(`rate notice not sent: ${error.message}`)))

    /** None: the server's settings keep the message from being answered. */
    const admit = (message: Message, reason: TriggerReason): Effect.Effect<Option.Option<ServerTurn>> =>
      Effect.gen(function*() {
        const guildId = message.guildId
        if (guildId === null) return Option.some({ persona: options.persona, useWebhooks: options.personaWebhooks, models: undefined })
        const settings = yield* settingsOf(guildId)
        const roleIds = new Set(message.member?.roles.cache.keys() ?? [])
        const refusal = serverAccess(settings, reason, { userId: message.author.id, roleIds })
        if (refusal !== undefined) {
          yield* Effect.logDebug(`not answered: ${refusal}`).pipe(Effect.annotateLogs({ guildId, messageId: message.id }))
          return Option.none()
        }
        const perMinute = settings.access.userMessagesPerMinute
        const decision = yield* limiter.admit(`${guildId}:${message.author.id}`, perMinute)
        if (decision._tag === "Refused") {
          yield* Effect.logInfo("not answered: the user's rate is exceeded").pipe(Effect.annotateLogs({ guildId, userId: message.author.id }))
          if (decision.notify) yield* tellRateLimited(message, perMinute, decision.retryAfterMs)
          return Option.none()
        }
        const models = effectiveChain(choices, yield* channelModels(guildId, message)) ?? effectiveChain(choices, settings.models)
        return Option.some({
          persona: serverPersona(options.persona, settings),
          useWebhooks: options.personaWebhooks || settings.persona.name !== undefined,
          models
        })
      })

    /** The model a turn in this channel starts on, when the channel or the server chose one. */
    const chosenModel = (guildId: string, channelId: string): Effect.Effect<string | undefined> =>
      Effect.all([
        store.channelModels(guildId, [channelId]).pipe(Effect.orElseSucceed(() => undefined)),
        Effect.map(settingsOf(guildId), (settings) => settings.models)
      ]).pipe(Effect.map(([channel, server]) => (effectiveChain(choices, channel) ?? effectiveChain(choices, server))?.[0]))

    /** Whether the server sets a persona name (its replies then come through webhooks). */
    const usesPersona = (guildId: string): Effect.Effect<boolean> =>
      Effect.map(settingsOf(guildId), (settings) => settings.persona.name !== undefined)

    return { admit, usesPersona, chosenModel } as const
  })
