import { Client, Events, GatewayIntentBits, Partials } from "discord.js"
import { Clock, Context, Data, Effect, FiberSet, Layer, Redacted } from "effect"
import { DiscordConfig } from "../config/DiscordConfig"
import { budgetedRequest } from "./budgetedRest"
import { cacheOptions } from "./clientCaches"
import { logGatewayEvents } from "./gatewayLog"
import { HistoryCoverage } from "./HistoryCoverage"
import { guardPacketHandling } from "./packetGuard"
import { trackHistoryCoverage } from "./historyCoverageEvents"
import { RequestBudget } from "./RequestBudget"
import { makeRequestWithEncodedForms } from "./restMultipart"

const DEVELOPER_PORTAL = "https://discord.com/developers/applications"

/** The bot could not connect; `message` is the one line shown at start-up. */
export class DiscordStartupError extends Data.TaggedError("DiscordStartupError")<{
  readonly reason: "invalid_token" | "disallowed_intents" | "connection"
  readonly detail: string
}> {
  override get message(): string {
    switch (this.reason) {
      case "invalid_token":
        return `Discord rejected DISCORD_TOKEN (invalid token): copy a fresh token from ${DEVELOPER_PORTAL} → your application → Bot → Reset Token.`
      case "disallowed_intents":
        return `Discord refused the Message Content intent: enable it at ${DEVELOPER_PORTAL} → your application → Bot → Privileged Gateway Intents → Message Content Intent, then restart.`
      case "connection":
        return `Could not connect to Discord: ${this.detail}`
    }
  }
}

/** Close codes of the gateway that end a login for good (discord-api-types GatewayCloseCodes). */
const AUTHENTICATION_FAILED = 4004
const DISALLOWED_INTENTS = 4014

const classify = (error: unknown, closeCode: number | undefined): DiscordStartupError => {
  const detail = error instanceof Error ? error.message : String(error)
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined
  const status = typeof error === "object" && error !== null && "status" in error ? error.status : undefined
  if (code === "TokenInvalid" || status === 401 || closeCode === AUTHENTICATION_FAILED || /authentication failed/i.test(detail)) {
    return new DiscordStartupError({ reason: "invalid_token", detail })
  }
  if (closeCode === DISALLOWED_INTENTS || /disallowed intents/i.test(detail)) {
    return new DiscordStartupError({ reason: "disallowed_intents", detail })
  }
  return new DiscordStartupError({ reason: "connection", detail })
}

/**
 * The intents the bot needs: guild and channel metadata, guild and DM messages, and their text
 * (Message Content is privileged: it must be enabled in the Developer Portal).
 */
const BOT_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.DirectMessages
] as const

/** Mentions in anything the bot sends ping nobody (model output may contain `@everyone`). */
export const NO_MENTIONS = { parse: [], repliedUser: false } as const

/**
 * A discord.js Client, logged in and ready (every guild of READY received). Logs in on
 * acquire and is destroyed on release; a bad token or a disallowed intent fails with one line.
 * Every REST request it makes takes a slot of the RequestBudget; its caches are bounded
 * (clientCaches) and tell the HistoryCoverage what they hold.
 */
export class DiscordClient extends Context.Service<DiscordClient, Client<true>>()("loopcord/discord/DiscordClient") {
  /** The client over a given budget and coverage (benchmarks compare budgets). */
  static readonly layerOver = Layer.effect(
    DiscordClient,
    Effect.gen(function*() {
      const config = yield* DiscordConfig
      const budget = yield* RequestBudget
      const coverage = yield* HistoryCoverage
      const runFork = yield* FiberSet.makeRuntime<never>()
      // Set once the client exists (the request function is built before it).
      let applicationId: () => string | undefined = () => undefined
      const makeRequest = budgetedRequest({ budget, runFork, applicationId: () => applicationId(), inner: makeRequestWithEncodedForms })
      const client = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new Client({
            intents: [...BOT_INTENTS],
            // DM channels are not cached until their first message arrives.
            partials: [Partials.Channel],
            allowedMentions: NO_MENTIONS,
            ...cacheOptions(coverage),
            rest: {
              makeRequest,
              // The budget paces every request over any one second; discord.js's own fixed
              // one-second windows would only hold requests back out of lane order. A 429 with
              // the global flag still stops discord.js (and the budget) for its retry_after.
              ...(budget.perSecond === undefined ? {} : { globalRequestsPerSecond: Number.POSITIVE_INFINITY }),
              ...(config.apiBaseUrl === undefined ? {} : { api: config.apiBaseUrl })
            },
            // DISCORD_SHARD_IDS / DISCORD_SHARD_COUNT: this host's share of the bot's shards.
            ...(config.shards === undefined ? {} : { shards: [...config.shards.ids], shardCount: config.shards.count })
          })
        ),
        (client) => Effect.promise(() => client.destroy())
      )
      applicationId = () => client.application?.id ?? client.user?.id
      yield* trackHistoryCoverage(client, coverage)
      yield* guardPacketHandling(client)
      // The close code says why a login failed (4004 bad token, 4014 disallowed intents);
      // it is only read after the login settled, by this fiber.
      let closeCode: number | undefined
      const onDisconnect = (event: { readonly code: number }) => {
        closeCode = event.code
      }
      client.on(Events.ShardDisconnect, onDisconnect)
      const ready = new Promise<Client<true>>((resolve) => client.once(Events.ClientReady, resolve))
      const started = yield* Clock.currentTimeMillis
      const readyClient = yield* Effect.tryPromise({
        try: () => client.login(Redacted.value(config.token)).then(() => ready),
        catch: (error) => classify(error, closeCode)
      }).pipe(Effect.ensuring(Effect.sync(() => client.off(Events.ShardDisconnect, onDisconnect))))
      // Removed before the client is destroyed (finalizers run in reverse): shutting down logs no drop.
      yield* logGatewayEvents(readyClient)
      const elapsed = (yield* Clock.currentTimeMillis) - started
      yield* Effect.logInfo(`Discord: logged in as ${readyClient.user.tag} in ${readyClient.guilds.cache.size} guild(s)`).pipe(
        Effect.annotateLogs({ userId: readyClient.user.id, ms: elapsed })
      )
      return readyClient
    })
  )

  /** The client with the budget DISCORD_GLOBAL_REQUESTS_PER_SECOND sets and a fresh history coverage (both provided too). */
  static readonly layer = DiscordClient.layerOver.pipe(Layer.provideMerge(Layer.merge(RequestBudget.layer, HistoryCoverage.layer)))
}
