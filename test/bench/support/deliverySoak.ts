/**
 * The soak's delivery phase (issue 11): channels on the fake Discord that a real discord.js
 * client writes to through the real reply sink (`makeDiscordReplySink` over the plain bot
 * target or the persona webhook target, `finishReply` after the turn), while the fake refuses
 * writes mid-reply: 10008 (message deleted), 30046 (too old to edit), 10015 (webhook gone),
 * 5xx that discord.js's retries do not get through (recovered by the sink's own retry, or
 * never: final), 50013 (final). Turns go through the soak's ChannelQueue like any other.
 *
 * Per turn it checks what Discord shows: a `completed` turn shows every sentence of its long
 * answer exactly once (nothing lost, nothing repeated); a recoverable or transient refusal
 * still lets the turn complete; a final one ends it `error` / `delivery_failed`, never
 * `completed` (the loop's side of the contract: a DeliveryError is always final).
 */
import type { Client, SendableChannels } from "discord.js"
import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import type { ChannelQueue } from "../../../src/chat/ChannelQueue"
import type { TurnInput, TurnSink } from "../../../src/chat/TurnInput"
import { DiscordConfig } from "../../../src/config/DiscordConfig"
import { DiscordClient } from "../../../src/discord/DiscordClient"
import { makeDiscordReplySink } from "../../../src/discord/DiscordReplySink"
import { finishReply } from "../../../src/discord/DiscordTurnInput"
import { PersonaWebhooks } from "../../../src/discord/PersonaWebhooks"
import { RateLimitGauge } from "../../../src/discord/RateLimitGauge"
import { channelReplyTarget } from "../../../src/discord/ReplyTarget"
import type { Persona } from "../../../src/domain/Persona"
import { FakeDiscord, type FaultRule } from "../../support/fakeDiscord"
import { SYSTEM_PROMPT } from "./contender"
import { SOAK_LONG_SENTENCES } from "./loopServer"
import { within } from "./stats"

/** What the fake does to one turn's writes (a rule scripted just before the turn is submitted). */
export type DeliveryFault = "none" | "10008" | "30046" | "10015" | "5xx-recovered" | "5xx-forever" | "50013"

/** Final refusals: the turn cannot be delivered and must not end `completed`. */
const FINAL: ReadonlySet<DeliveryFault> = new Set(["5xx-forever", "50013"])

/** Every kind in turn (channel by channel, offset), so each one fires in every run. */
export const DELIVERY_FAULTS: ReadonlyArray<DeliveryFault> = ["none", "10008", "30046", "10015", "5xx-recovered", "5xx-forever", "50013"]

/** Sink retries shortened for the soak: 3 tries after 100, 200, 400 ms. */
const SINK_OPTIONS = { minEditInterval: "20 millis", transientRetries: 3, transientBaseDelay: "100 millis" } as const
/** Requests discord.js makes per sink try of a 5xx (its own 3 retries). */
const DISCORD_JS_TRIES = 4

const persona: Persona = { id: undefined, name: "Soak Persona", avatarUrl: undefined, systemPrompt: SYSTEM_PROMPT }

export interface DeliveryPhaseOptions {
  readonly channels: number
  readonly turns: number
  readonly random: () => number
  readonly queue: ChannelQueue["Service"]
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E, never>) => Promise<A>
  readonly runPromiseExit: <A, E>(effect: Effect.Effect<A, E, never>) => Promise<Exit.Exit<A, E>>
  readonly ticketBoundMs: number
}

export interface DeliveryPhaseTally {
  turns: number
  stuck: number
  /** Failures other than the outcomes a turn may have (defects). */
  crashes: number
  readonly byOutcome: Map<string, number>
  readonly faults: Map<DeliveryFault, number>
  /** Completed turns that do not show every sentence of their answer, by the fault scripted for them. */
  readonly lostByFault: Map<DeliveryFault, number>
  /** Completed turns that show a sentence more than once. */
  repeated: number
  /** Turns whose final refusal fired but that did not end `error` / `delivery_failed`. */
  finalNotReported: number
  /** Turns whose recoverable or transient refusal fired but that did not complete (the sink gave up on what it should have recovered). */
  failedDespiteRecoverable: number
  /** Turns whose scripted fault fired, by fault. */
  readonly fired: Map<DeliveryFault, number>
}

const bump = <K>(map: Map<K, number>, key: K, by = 1) => map.set(key, (map.get(key) ?? 0) + by)

/** Edits of a reply message in a channel (bot path), or of a message of the channel's persona webhook. */
const editPath = (fake: FakeDiscord, path: "bot" | "webhook", channelId: string): RegExp | undefined => {
  if (path === "bot") return new RegExp(`^/channels/${channelId}/messages/\\d+$`)
  const webhook = fake.webhooks(channelId)[0]
  // Before the channel's first persona message there is no webhook to refuse edits of.
  return webhook === undefined ? undefined : new RegExp(`^/webhooks/${webhook.id}/[^/]+/messages/\\d+$`)
}

const faultRule = (fault: DeliveryFault, path: RegExp): FaultRule | undefined => {
  // The reply's first edit is refused (its first message is posted, the rest still streams):
  // every scripted fault fires, so no criterion passes for want of one.
  const skip = 0
  switch (fault) {
    case "none":
      return undefined
    case "10008":
      return { method: "PATCH", path, status: 404, code: 10008, skip }
    case "30046":
      return { method: "PATCH", path, status: 400, code: 30046, skip }
    case "10015":
      return { method: "PATCH", path, status: 404, code: 10015, skip }
    case "5xx-recovered":
      // discord.js's tries and one of the sink's: the sink's next try gets through.
      return { method: "PATCH", path, status: 503, skip, times: DISCORD_JS_TRIES + 1 }
    case "5xx-forever":
      return { method: "PATCH", path, status: 502, skip, times: DISCORD_JS_TRIES * (SINK_OPTIONS.transientRetries + 1) }
    case "50013":
      return { method: "PATCH", path, status: 403, code: 50013, skip }
  }
}

/** Lost and repeated sentences of turn `id`'s long answer in `contents` (split at whitespace: joined as they are). */
const sentenceTally = (id: string, contents: ReadonlyArray<string>) => {
  const all = contents.join("")
  let lost = 0
  let repeated = 0
  for (let n = 1; n <= SOAK_LONG_SENTENCES; n++) {
    const seen = all.split(`Turn ${id} sentence ${n} `).length - 1
    if (seen === 0) lost += 1
    if (seen > 1) repeated += seen - 1
  }
  return { lost, repeated }
}

/** Runs the delivery phase; the fake Discord and the client are closed at the end. */
export const runDeliveryPhase = async (options: DeliveryPhaseOptions): Promise<DeliveryPhaseTally> => {
  const fake = await FakeDiscord.start()
  const discord = ManagedRuntime.make(
    Layer.mergeAll(PersonaWebhooks.Default, RateLimitGauge.Default).pipe(
      Layer.provideMerge(DiscordClient.layer),
      Layer.provide(DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase }))
    )
  )
  const tally: DeliveryPhaseTally = {
    turns: 0,
    stuck: 0,
    crashes: 0,
    byOutcome: new Map(),
    faults: new Map(),
    lostByFault: new Map(),
    repeated: 0,
    finalNotReported: 0,
    failedDespiteRecoverable: 0,
    fired: new Map()
  }
  try {
    const client: Client<true> = await discord.runPromise(DiscordClient)
    const webhooks = await discord.runPromise(PersonaWebhooks)
    const gauge = await discord.runPromise(RateLimitGauge)
    const channels = Array.from({ length: options.channels }, (_, index) => {
      const channel = fake.addChannel({ kind: "text", name: `soak-${index}` })
      fake.dispatch("CHANNEL_CREATE", { id: channel.id, type: 0, guild_id: fake.guild.id, name: channel.name, position: index + 1, permission_overwrites: [] }, fake.guild.id)
      return channel
    })
    await fake.waitFor(() => channels.every((channel) => client.channels.cache.has(channel.id)), 10_000, "soak channels cached")
    let counter = 0

    const turn = async (channel: SendableChannels, path: "bot" | "webhook", scripted: DeliveryFault) => {
      const id = `d${++counter}`
      const edits = editPath(fake, path, channel.id)
      const fault = edits === undefined ? "none" : scripted
      bump(tally.faults, fault)
      const rule = edits === undefined ? undefined : faultRule(fault, edits)
      const live = rule === undefined ? undefined : fake.failNext(rule)
      let messageIds: Effect.Effect<ReadonlyArray<string>> = Effect.succeed([])
      const openSink = Effect.gen(function*() {
        const plain = yield* channelReplyTarget(channel, undefined)
        const target = path === "webhook" ? yield* webhooks.target(channel, persona, plain) : plain
        const reply = yield* makeDiscordReplySink(target, { ...SINK_OPTIONS, awaitBucket: gauge.awaitReset })
        messageIds = reply.messageIds
        const sink: TurnSink = { sink: reply.sink, finish: (result) => finishReply(reply, channel, result) }
        return sink
      })
      const input: TurnInput = {
        channelId: channel.id,
        guildId: fake.guild.id,
        userId: "soak-user",
        messageId: `${channel.id}-${id}`,
        isDM: false,
        locale: "en",
        persona,
        loadContext: Effect.succeed([{ role: "user", content: `turn:${id}:plan:${options.random() < 0.3 ? "e" : ""}l` }]),
        shouldSurfaceUserErrors: true,
        openSink
      }
      const exit = await within(options.runPromiseExit(Effect.flatMap(options.queue.submit(input), (ticket) => ticket.result)), options.ticketBoundMs)
      tally.turns += 1
      const fired = live !== undefined && rule !== undefined && live.times !== (rule.times ?? 1)
      if (fired) bump(tally.fired, fault)
      // A fault that did not fire (or not in full) in this turn would land on a later one: withdrawn.
      if (live !== undefined) live.times = 0
      if (exit === undefined) {
        tally.stuck += 1
        bump(tally.byOutcome, "STUCK")
        return
      }
      if (Exit.isFailure(exit)) {
        tally.crashes += 1
        bump(tally.byOutcome, "FAILED")
        process.stderr.write(`delivery turn ${id} (${fault}) failed: ${Cause.pretty(exit.cause)}\n`)
        return
      }
      const status = exit.value.status
      bump(tally.byOutcome, exit.value.reason === undefined ? status : `${status}/${exit.value.reason}`)
      if (FINAL.has(fault) && fired) {
        if (status !== "error" || exit.value.reason !== "delivery_failed") tally.finalNotReported += 1
        return
      }
      // The delivery phase's plans have no provider faults: only a delivery failure can keep a turn from completing.
      if (status !== "completed") {
        if (fired) tally.failedDespiteRecoverable += 1
        return
      }
      const ids = await options.runPromise(messageIds)
      const contents = ids.flatMap((messageId) => {
        const message = fake.message(messageId)
        return message === undefined || message.deleted ? [] : [message.content]
      })
      const { lost, repeated } = sentenceTally(id, contents)
      if (lost > 0) bump(tally.lostByFault, fault)
      if (repeated > 0) tally.repeated += 1
    }

    await Promise.all(channels.map(async (fakeChannel, index) => {
      const channel = await client.channels.fetch(fakeChannel.id)
      if (channel === null || !channel.isSendable()) throw new Error(`soak channel ${fakeChannel.id} is not sendable`)
      for (let sent = 0; sent < options.turns; sent++) {
        const fault = DELIVERY_FAULTS[(index * 3 + sent) % DELIVERY_FAULTS.length] ?? "none"
        await turn(channel, index % 2 === 0 ? "bot" : "webhook", fault)
      }
    }))
    return tally
  } finally {
    await discord.dispose()
    await fake.close()
  }
}
