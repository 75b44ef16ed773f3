import { PermissionFlagsBits, type SendableChannels, type TextChannel, type Webhook, type WebhookType } from "discord.js"
import { Clock, Duration, Effect, Option, Ref } from "effect"
import type { DeliveryError } from "../loop/ResponseSink"
import type { Persona } from "../loop/CurrentTurn"
import { DiscordClient, NO_MENTIONS } from "./DiscordClient"
import { discordErrorCode, DiscordErrorCode, toDeliveryError } from "./discordErrors"
import type { OutgoingMessage, ReplyTarget } from "./ReplyTarget"

/** The webhook name the bot creates (one per channel, reused by every persona). */
export const WEBHOOK_NAME = "loopcord"
/** After Discord refused to create a webhook (no Manage Webhooks), don't ask again for this long. */
const DENIED_RETRY_AFTER = Duration.minutes(10)

type ChannelWebhook = Webhook<WebhookType.Incoming>

/** A channel that can own webhooks (threads use their parent's). */
type WebhookHost = Pick<TextChannel, "id" | "createWebhook" | "fetchWebhooks" | "permissionsFor">

const webhookHost = (channel: SendableChannels): WebhookHost | undefined => {
  const host = channel.isThread() ? channel.parent : channel
  if (host === null || host.isDMBased()) return undefined
  return "createWebhook" in host && "fetchWebhooks" in host ? host : undefined
}

/** Persona names Discord accepts for webhook messages: 1–80 characters, never "discord" or "clyde". */
export const webhookUsername = (name: string): string => {
  const cleaned = name.replace(/discord/gi, "d*scord").replace(/clyde/gi, "cl*de").trim().slice(0, 80)
  return cleaned.length === 0 ? WEBHOOK_NAME : cleaned
}

/**
 * One cached webhook per channel for persona messages (threads use the parent's with
 * `thread_id`). A webhook someone deleted (10015 Unknown Webhook) is recreated; without the
 * Manage Webhooks permission the persona falls back to plain bot messages.
 */
export class PersonaWebhooks extends Effect.Service<PersonaWebhooks>()("loopcord/discord/PersonaWebhooks", {
  effect: Effect.gen(function*() {
    const client = yield* DiscordClient
    const cache = yield* Ref.make(new Map<string, ChannelWebhook>())
    const deniedUntil = yield* Ref.make(new Map<string, number>())
    // Every webhook of ours seen since start (kept after a deletion: its messages stay ours).
    const ownIds = yield* Ref.make(new Set<string>())
    // Two threads of one channel must not both create a webhook.
    const creating = yield* Effect.makeSemaphore(1)

    const forget = (hostId: string) => Ref.update(cache, (map) => {
      const next = new Map(map)
      next.delete(hostId)
      return next
    })

    const findOrCreate = (host: WebhookHost): Effect.Effect<Option.Option<ChannelWebhook>, DeliveryError> =>
      Effect.gen(function*() {
        const cached = (yield* Ref.get(cache)).get(host.id)
        if (cached !== undefined) return Option.some(cached)
        const now = yield* Clock.currentTimeMillis
        const denied = (yield* Ref.get(deniedUntil)).get(host.id)
        const permitted = host.permissionsFor(client.user)?.has(PermissionFlagsBits.ManageWebhooks) ?? false
        if ((denied !== undefined && now < denied) || !permitted) return Option.none()
        const webhook = yield* Effect.tryPromise({
          try: async (): Promise<ChannelWebhook> => {
            const existing = (await host.fetchWebhooks()).find((candidate): candidate is ChannelWebhook =>
              candidate.isIncoming() && candidate.token !== null && (candidate.applicationId === client.user.id || candidate.owner?.id === client.user.id)
            )
            return existing ?? (await host.createWebhook({ name: WEBHOOK_NAME, reason: "loopcord persona messages" }))
          },
          catch: (error) => error
        }).pipe(
          Effect.map(Option.some),
          Effect.catchAll((error) => {
            const delivery = toDeliveryError(error)
            // A gone channel ends the turn; anything else (no Manage Webhooks, 15 webhooks
            // already) only costs the persona its name and avatar for a while.
            if (delivery.reason === "channel_deleted" || discordErrorCode(error) === DiscordErrorCode.MissingAccess) {
              return Effect.fail(delivery)
            }
            return Effect.logWarning(`Cannot use a webhook for persona messages; sending as the bot: ${delivery.detail}`).pipe(
              Effect.annotateLogs({ channelId: host.id }),
              Effect.zipRight(Ref.update(deniedUntil, (map) => new Map(map).set(host.id, now + Duration.toMillis(DENIED_RETRY_AFTER)))),
              Effect.as(Option.none<ChannelWebhook>())
            )
          })
        )
        if (Option.isSome(webhook)) {
          yield* Ref.update(cache, (map) => new Map(map).set(host.id, webhook.value))
          yield* Ref.update(ownIds, (ids) => new Set(ids).add(webhook.value.id))
        }
        return webhook
      }).pipe(creating.withPermits(1))

    /**
     * Persona messages in `channel`; `fallback` (plain bot messages) when the channel has no
     * webhook support or the bot may not manage webhooks there.
     */
    const target = (channel: SendableChannels, persona: Persona, fallback: ReplyTarget): Effect.Effect<ReplyTarget> =>
      Effect.gen(function*() {
        const host = webhookHost(channel)
        if (host === undefined) return fallback
        const threadId = channel.isThread() ? channel.id : undefined
        const identity = { username: webhookUsername(persona.name), ...(persona.avatarUrl === undefined ? {} : { avatarURL: persona.avatarUrl }) }
        // Messages that went out as the bot are edited as the bot.
        const viaFallback = yield* Ref.make(new Set<string>())
        const lastWebhookId = yield* Ref.make<string | undefined>(undefined)

        const execute = (webhook: ChannelWebhook, message: OutgoingMessage) =>
          Effect.zipRight(Ref.set(lastWebhookId, webhook.id), Effect.tryPromise({
            try: (): Promise<{ readonly id: string }> =>
              webhook.send({
                ...(message._tag === "Text" ? { content: message.content } : { embeds: [message.embed] }),
                ...identity,
                ...(threadId === undefined ? {} : { threadId }),
                allowedMentions: NO_MENTIONS
              }),
            catch: (error) => error
          }))

        /** Sends through the cached webhook; a deleted one is recreated and the send retried once. */
        const sendViaWebhook = (message: OutgoingMessage): Effect.Effect<Option.Option<string>, DeliveryError> =>
          Effect.gen(function*() {
            const webhook = yield* findOrCreate(host)
            if (Option.isNone(webhook)) return Option.none()
            const first = yield* Effect.either(execute(webhook.value, message))
            if (first._tag === "Right") return Option.some(first.right.id)
            if (discordErrorCode(first.left) !== DiscordErrorCode.UnknownWebhook) return yield* Effect.fail(toDeliveryError(first.left))
            yield* Effect.logWarning("Persona webhook was deleted (10015); recreating it").pipe(Effect.annotateLogs({ channelId: host.id }))
            yield* forget(host.id)
            const fresh = yield* findOrCreate(host)
            if (Option.isNone(fresh)) return Option.none()
            const sent = yield* execute(fresh.value, message).pipe(Effect.mapError(toDeliveryError))
            return Option.some(sent.id)
          })

        const send = (message: OutgoingMessage): Effect.Effect<string, DeliveryError> =>
          Effect.flatMap(sendViaWebhook(message), Option.match({
            onSome: Effect.succeed,
            onNone: () =>
              fallback.send(message).pipe(Effect.tap((id) => Ref.update(viaFallback, (ids) => new Set(ids).add(id))))
          }))

        const edit = (messageId: string, content: string): Effect.Effect<string, DeliveryError> =>
          Effect.gen(function*() {
            if ((yield* Ref.get(viaFallback)).has(messageId)) return yield* fallback.edit(messageId, content)
            const webhook = yield* findOrCreate(host)
            if (Option.isNone(webhook)) return yield* send({ _tag: "Text", content })
            const edited = yield* Effect.either(Effect.tryPromise({
              try: () => webhook.value.editMessage(messageId, { content, ...(threadId === undefined ? {} : { threadId }), allowedMentions: NO_MENTIONS }),
              catch: (error) => error
            }))
            if (edited._tag === "Right") return messageId
            if (discordErrorCode(edited.left) !== DiscordErrorCode.UnknownWebhook) return yield* Effect.fail(toDeliveryError(edited.left))
            // Only the webhook that posted a message may edit it: its content goes out as a new
            // message and the stale one is removed when the bot may (Manage Messages).
            yield* forget(host.id)
            const replacement = yield* send({ _tag: "Text", content })
            yield* Effect.tryPromise(() => channel.messages.delete(messageId)).pipe(Effect.ignore)
            return replacement
          })

        const rateLimitKeys = Effect.map(Ref.get(lastWebhookId), (webhookId) => (webhookId === undefined ? [channel.id] : [channel.id, webhookId]))
        return { channelId: channel.id, rateLimitKeys, send, edit }
      })

    /**
     * Whether `webhookId` is one the bot posts personas through (a reply to a persona message
     * is a reply to the bot). Unknown ids make it load the channel's webhook once.
     */
    const isOwnWebhook = (channel: SendableChannels, webhookId: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        if ((yield* Ref.get(ownIds)).has(webhookId)) return true
        const host = webhookHost(channel)
        if (host === undefined) return false
        yield* findOrCreate(host).pipe(Effect.ignore)
        return (yield* Ref.get(ownIds)).has(webhookId)
      })

    /** Ids known so far, without asking Discord (history reading). */
    const knownOwnIds = Ref.get(ownIds)

    return { target, forget, isOwnWebhook, knownOwnIds } as const
  })
}) {}
