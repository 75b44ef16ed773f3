import { PermissionFlagsBits, type SendableChannels, type TextChannel, type Webhook, type WebhookType } from "discord.js"
import { Clock, Context, Duration, Effect, Layer, Option, Ref, Semaphore } from "effect"
import type { Persona } from "../domain/Persona"
import { type BoundedCache, cacheDelete, cacheGet, cacheKeys, cacheSet, emptyCache } from "./boundedCache"
import { DiscordClient, NO_MENTIONS } from "./DiscordClient"
import { classifyWriteError, discordErrorCode, DiscordErrorCode, ReplyWriteError } from "./discordErrors"
import { recoverLostWebhookPost, type UnansweredPost } from "./lostWebhookPosts"
import { inLane, type RequestTicket, underTicket } from "./budgetedRest"
import { type EditOptions, messagePayload, type OutgoingMessage, type ReplyTarget, type SendOptions } from "./ReplyTarget"

/** The webhook name the bot creates (one per channel, reused by every persona). */
const WEBHOOK_NAME = "loopcord"
/** After Discord refused to create a webhook (no Manage Webhooks), don't ask again for this long. */
const DENIED_RETRY_AFTER = Duration.minutes(10)
/**
 * Bounds of the per-channel caches (docs/architecture.md, Bounded state at the Discord front): a
 * channel's webhook is looked up again after a day (one request), and at most this many channels
 * are remembered.
 */
const WEBHOOK_CACHE_TTL = Duration.hours(24)
const MAX_CACHED_CHANNELS = 10_000
/** Our webhook ids are remembered a week after they were last seen (replies to older persona messages load the channel's webhook again). */
const OWN_ID_TTL = Duration.days(7)
const MAX_OWN_IDS = 20_000

const bounds = (ttl: Duration.Duration, maxEntries: number) => ({ ttlMs: Duration.toMillis(ttl), maxEntries })
const cacheBounds = bounds(WEBHOOK_CACHE_TTL, MAX_CACHED_CHANNELS)
const deniedBounds = bounds(DENIED_RETRY_AFTER, MAX_CACHED_CHANNELS)
const ownIdBounds = bounds(OWN_ID_TTL, MAX_OWN_IDS)

type ChannelWebhook = Webhook<WebhookType.Incoming>

/** Unanswered posts remembered per reply (a reply has at most DISCORD_MAX_MESSAGES_PER_TURN messages plus reposts). */
const MAX_UNANSWERED_POSTS = 32

const mapWithout = <V>(map: ReadonlyMap<string, V>, key: string): Map<string, V> => {
  const next = new Map(map)
  next.delete(key)
  return next
}

/** Drops the oldest entries beyond MAX_UNANSWERED_POSTS (a Map iterates in insertion order). */
const boundedSet = <V>(map: Map<string, V>): Map<string, V> =>
  map.size <= MAX_UNANSWERED_POSTS ? map : new Map([...map].slice(map.size - MAX_UNANSWERED_POSTS))

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
 * `thread_id`). A webhook someone deleted (10015 Unknown Webhook) is recreated for the next
 * message; a message it had posted can no longer be edited (`frozen`: the reply continues in a
 * new message). Without the Manage Webhooks permission the persona falls back to plain bot
 * messages. The caches are bounded and expire (see the constants above).
 */
export class PersonaWebhooks extends Context.Service<PersonaWebhooks>()("loopcord/discord/PersonaWebhooks", {
  make: Effect.gen(function*() {
    const client = yield* DiscordClient
    const cache = yield* Ref.make<BoundedCache<ChannelWebhook>>(emptyCache())
    const deniedUntil = yield* Ref.make<BoundedCache<true>>(emptyCache())
    // Every webhook of ours seen lately (kept after a deletion: its messages stay ours).
    const ownIds = yield* Ref.make<BoundedCache<true>>(emptyCache())
    // Two threads of one channel must not both create a webhook.
    const creating = yield* Semaphore.make(1)

    const forget = (hostId: string) => Ref.update(cache, (entries) => cacheDelete(entries, hostId))
    const forgetIfCached = (hostId: string, webhookId: string) =>
      Ref.update(cache, (entries) => (entries.get(hostId)?.value.id === webhookId ? cacheDelete(entries, hostId) : entries))

    /**
     * The channel's webhook. A lookup Discord is asked for goes in the lane of the post it
     * stands before, paying for itself (the post's slot stays for the post).
     */
    const findOrCreate = (host: WebhookHost, ticket?: RequestTicket): Effect.Effect<Option.Option<ChannelWebhook>, ReplyWriteError> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const cached = cacheGet(yield* Ref.get(cache), host.id, now)
        if (cached !== undefined) return Option.some(cached)
        const denied = cacheGet(yield* Ref.get(deniedUntil), host.id, now) !== undefined
        const permitted = host.permissionsFor(client.user)?.has(PermissionFlagsBits.ManageWebhooks) ?? false
        if (denied || !permitted) return Option.none()
        const webhook = yield* Effect.tryPromise({
          try: (): Promise<ChannelWebhook> => inLane(ticket?.lane ?? "control", undefined, async () => {
            const existing = (await host.fetchWebhooks()).find((candidate): candidate is ChannelWebhook =>
              candidate.isIncoming() && candidate.token !== null && (candidate.applicationId === client.user.id || candidate.owner?.id === client.user.id)
            )
            return existing ?? (await host.createWebhook({ name: WEBHOOK_NAME, reason: "loopcord persona messages" }))
          }),
          catch: (error) => error
        }).pipe(
          Effect.map(Option.some),
          Effect.catch((error) => {
            const failure = classifyWriteError(error, "send")
            // A gone channel, lost access or a Discord outage is the reply's problem; anything
            // else (no Manage Webhooks, 15 webhooks already) only costs the persona its name
            // and avatar for a while.
            if (failure.kind === "transient" || failure.reason === "channel_deleted" || discordErrorCode(error) === DiscordErrorCode.MissingAccess) {
              return Effect.fail(failure)
            }
            return Effect.logWarning(`Cannot use a webhook for persona messages; sending as the bot: ${failure.detail}`).pipe(
              Effect.annotateLogs({ channelId: host.id }),
              Effect.andThen(Ref.update(deniedUntil, (entries) => cacheSet(entries, host.id, true, now, deniedBounds))),
              Effect.as(Option.none<ChannelWebhook>())
            )
          })
        )
        if (Option.isSome(webhook)) {
          yield* Ref.update(cache, (entries) => cacheSet(entries, host.id, webhook.value, now, cacheBounds))
          yield* Ref.update(ownIds, (ids) => cacheSet(ids, webhook.value.id, true, now, ownIdBounds))
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
        // Messages that went out as the bot are edited as the bot; the others by the webhook
        // that posted them (only that one may). Per turn: as many as the reply has messages.
        const viaFallback = yield* Ref.make(new Set<string>())
        const postedBy = yield* Ref.make(new Map<string, ChannelWebhook>())
        const lastWebhook = yield* Ref.make<ChannelWebhook | undefined>(undefined)
        // Posts (by nonce) whose answer was lost to a transient failure: the retry looks for the copy first.
        const unanswered = yield* Ref.make(new Map<string, UnansweredPost>())

        const execute = (webhook: ChannelWebhook, message: OutgoingMessage, ticket: RequestTicket | undefined) =>
          Effect.andThen(Ref.set(lastWebhook, webhook), Effect.tryPromise({
            try: (): Promise<{ readonly id: string }> =>
              underTicket(ticket, () =>
                webhook.send({
                  ...messagePayload(message),
                  ...identity,
                  ...(threadId === undefined ? {} : { threadId }),
                  allowedMentions: NO_MENTIONS
                })),
            catch: (error) => error
          })).pipe(Effect.tap((sent) => Ref.update(postedBy, (map) => new Map(map).set(sent.id, webhook))))

        /**
         * Sends through the cached webhook; a deleted one is recreated and the send tried once
         * more. None: send as the bot (no webhook here, or the new one is gone at once too).
         */
        const sendViaWebhook = (message: OutgoingMessage, ticket: RequestTicket | undefined): Effect.Effect<Option.Option<string>, ReplyWriteError> =>
          Effect.gen(function*() {
            const webhook = yield* findOrCreate(host, ticket)
            if (Option.isNone(webhook)) return Option.none()
            const first = yield* Effect.result(execute(webhook.value, message, ticket))
            if (first._tag === "Success") return Option.some(first.success.id)
            if (discordErrorCode(first.failure) !== DiscordErrorCode.UnknownWebhook) return yield* Effect.fail(classifyWriteError(first.failure, "send"))
            yield* Effect.logWarning("Persona webhook was deleted (10015); recreating it").pipe(Effect.annotateLogs({ channelId: host.id }))
            yield* forget(host.id)
            const fresh = yield* findOrCreate(host, ticket)
            if (Option.isNone(fresh)) return Option.none()
            const second = yield* Effect.result(execute(fresh.value, message, ticket))
            if (second._tag === "Success") return Option.some(second.success.id)
            if (discordErrorCode(second.failure) !== DiscordErrorCode.UnknownWebhook) return yield* Effect.fail(classifyWriteError(second.failure, "send"))
            yield* forget(host.id)
            yield* Effect.logWarning("The recreated persona webhook is gone too; this message goes out as the bot").pipe(Effect.annotateLogs({ channelId: host.id }))
            return Option.none()
          })

        const postOnce = (message: OutgoingMessage, options?: SendOptions): Effect.Effect<string, ReplyWriteError> =>
          Effect.flatMap(sendViaWebhook(message, options?.ticket), Option.match({
            onSome: Effect.succeed,
            onNone: () =>
              fallback.send(message, options).pipe(Effect.tap((id) => Ref.update(viaFallback, (ids) => new Set(ids).add(id))))
          }))

        /** A lost copy of an earlier try of this post, adopted as the reply's message. */
        const recovered = (nonce: string, message: OutgoingMessage): Effect.Effect<Option.Option<string>> =>
          Effect.gen(function*() {
            const post = (yield* Ref.get(unanswered)).get(nonce)
            if (post === undefined) return Option.none()
            const known = new Set([...(yield* Ref.get(postedBy)).keys(), ...(yield* Ref.get(viaFallback))])
            const found = yield* recoverLostWebhookPost(channel, threadId, post, message, known)
            if (Option.isSome(found)) yield* Ref.update(postedBy, (map) => new Map(map).set(found.value, post.webhook))
            return found
          })

        const send = (message: OutgoingMessage, options?: SendOptions): Effect.Effect<string, ReplyWriteError> => {
          const nonce = options?.nonce
          if (nonce === undefined) return postOnce(message, options)
          return Effect.gen(function*() {
            const copy = yield* recovered(nonce, message)
            if (Option.isSome(copy)) {
              yield* Ref.update(unanswered, (map) => mapWithout(map, nonce))
              return copy.value
            }
            const since = yield* Clock.currentTimeMillis
            const result = yield* Effect.result(postOnce(message, options))
            const webhook = yield* Ref.get(lastWebhook)
            yield* Ref.update(unanswered, (map) =>
              result._tag === "Failure" && result.failure.kind === "transient" && webhook !== undefined
                ? boundedSet(map.has(nonce) ? map : new Map(map).set(nonce, { webhook, since }))
                : mapWithout(map, nonce))
            return yield* Effect.fromResult(result)
          })
        }

        const edit = (messageId: string, content: string, options?: EditOptions): Effect.Effect<void, ReplyWriteError> =>
          Effect.gen(function*() {
            if ((yield* Ref.get(viaFallback)).has(messageId)) return yield* fallback.edit(messageId, content, options)
            const webhook = (yield* Ref.get(postedBy)).get(messageId)
            if (webhook === undefined) {
              return yield* Effect.fail(new ReplyWriteError({ kind: "frozen", reason: "failed", detail: `message ${messageId} was not posted by this reply` }))
            }
            yield* Effect.tryPromise({
              try: () =>
                underTicket(options?.ticket, () =>
                  webhook.editMessage(messageId, { content, ...(threadId === undefined ? {} : { threadId }), allowedMentions: NO_MENTIONS })),
              catch: (error) => error
            }).pipe(
              Effect.tapError((error) =>
                discordErrorCode(error) === DiscordErrorCode.UnknownWebhook
                  ? Effect.andThen(
                    Effect.logWarning("Persona webhook was deleted (10015); its messages stay as they are, the reply continues in a new one").pipe(
                      Effect.annotateLogs({ channelId: host.id })
                    ),
                    // The next message recreates it (unless the cache already holds a newer one).
                    forgetIfCached(host.id, webhook.id)
                  )
                  : Effect.void
              ),
              Effect.mapError((error) => classifyWriteError(error, "edit"))
            )
          })

        const rateLimitKeys = Effect.map(Ref.get(lastWebhook), (webhook) => (webhook === undefined ? [channel.id] : [channel.id, webhook.id]))
        return { channelId: channel.id, rateLimitKeys, send, edit }
      })

    /**
     * Whether `webhookId` is one the bot posts personas through (a reply to a persona message
     * is a reply to the bot). Unknown ids make it load the channel's webhook once.
     */
    const isOwnWebhook = (channel: SendableChannels, webhookId: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        if ((yield* knownOwnIds).has(webhookId)) return true
        const host = webhookHost(channel)
        if (host === undefined) return false
        yield* findOrCreate(host).pipe(Effect.ignore)
        return (yield* knownOwnIds).has(webhookId)
      })

    /** Ids known so far, without asking Discord (history reading). */
    const knownOwnIds: Effect.Effect<ReadonlySet<string>> = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(Ref.get(ownIds), (ids) => cacheKeys(ids, now)))

    return { target, forget, isOwnWebhook, knownOwnIds } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
