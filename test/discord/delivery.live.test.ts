import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result, Fiber } from "effect"
import type { Persona } from "../../src/domain/Persona"
import { keepTyping } from "../../src/discord/TypingIndicator"
import { makeDiscordReplySink } from "../../src/discord/DiscordReplySink"
import { finishReply } from "../../src/discord/DiscordTurnInput"
import type { TurnStatus } from "../../src/domain/PassResult"
import type { TurnResult } from "../../src/domain/TurnResult"
import { splitMessage } from "../../src/discord/messageSplitter"
import { channelReplyTarget } from "../../src/discord/ReplyTarget"
import { Permission, botPermissions, type FaultRule, waitUntil } from "../support/fakeDiscord"
import { liveDiscord, sendableChannel } from "./liveDiscord"

const persona: Persona = { id: "p1", name: "Nerine", avatarUrl: "https://cdn.example/nerine.png", systemPrompt: "" }

/** The measure: a 60-sentence reply streamed sentence by sentence. */
const SENTENCES = 60
const sentenceText = Array.from({ length: SENTENCES }, (_, i) => `This is sentence number ${i + 1}, which carries a few more words. `).join("")

/** Each numbered sentence across the channel's bot messages (split at whitespace, so joined as they are): lost and repeated ones. */
const tally = (contents: ReadonlyArray<string>) => {
  const all = contents.join("")
  let lost = 0
  let repeated = 0
  for (let n = 1; n <= SENTENCES; n++) {
    const seen = all.split(`sentence number ${n},`).length - 1
    if (seen === 0) lost += 1
    if (seen > 1) repeated += seen - 1
  }
  return { lost, repeated }
}

type DeliveryPath = "bot" | "webhook"

/** Edits of a reply message on each path. */
const editRoute: Record<DeliveryPath, RegExp> = {
  bot: /^\/channels\/\d+\/messages\/\d+$/,
  webhook: /^\/webhooks\/\d+\/[^/]+\/messages\/\d+$/
}
/** Posts of a reply message on each path. */
const postRoute: Record<DeliveryPath, RegExp> = {
  bot: /^\/channels\/\d+\/messages$/,
  webhook: /^\/webhooks\/\d+\/[^/]+$/
}

/**
 * Streams the 60 sentences through the real sink and target of `path` (bot messages, or the
 * persona webhook), with `fault` scripted on the fake; the pass's outcome and what Discord shows.
 */
const streamWithFault = (path: DeliveryPath, fault: FaultRule | undefined) =>
  Effect.gen(function*() {
    const { client, fake, webhooks } = yield* liveDiscord()
    const channel = yield* sendableChannel(client, fake, fake.channel.id)
    const plain = yield* channelReplyTarget(channel, undefined)
    const target = path === "bot" ? plain : yield* webhooks.target(channel, persona, plain)
    const reply = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis", transientBaseDelay: "50 millis", transientRetries: 2 })
    if (fault !== undefined) fake.failNext(fault)
    const ended = yield* Effect.result(Effect.andThen(stream(reply.sink.write, sentenceText, 67, "15 millis"), reply.sink.endPass("flush")))
    const contents = fake.botMessages(fake.channel.id).map((message) => message.content)
    return { fake, ended, contents, ...tally(contents) }
  })

const words = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

/** Streams `text` into the sink in small deltas with real pauses. */
const stream = <E>(write: (delta: string) => Effect.Effect<void, E>, text: string, size = 40, pause: Duration.Input = "2 millis") =>
  Effect.forEach(words(text, size), (delta) => Effect.andThen(write(delta), Effect.sleep(pause)), { discard: true })

describe("Discord delivery against a fake Discord (real discord.js)", () => {
  it.live("a 5000-character reply with a code block arrives as valid ≤2000-character messages, fences intact, replying to the trigger, pinging nobody", () =>
    Effect.gen(function*() {
      const { client, fake, gauge } = yield* liveDiscord()
      const trigger = fake.userSays(fake.channel, "write me some code", { mentionBot: true })
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* channelReplyTarget(channel, trigger.id)
      const reply = yield* makeDiscordReplySink(target, { minEditInterval: "100 millis", awaitBucket: gauge.awaitReset })
      const code = Array.from({ length: 130 }, (_, i) => `def step_${i}(x):\n    return x * ${i}  # @everyone`).join("\n")
      const text = `Sure @everyone, here it is:\n\n\`\`\`python\n${code}\n\`\`\`\n\nDone.`
      assert.isAbove(text.length, 5000)
      yield* stream(reply.sink.write, text, 150)
      assert.strictEqual(yield* reply.sink.endPass("flush"), text)
      const posted = fake.botMessages(fake.channel.id)
      assert.deepStrictEqual(posted.map((message) => message.content), [...splitMessage(text)])
      for (const message of posted) assert.isAtMost(message.content.length, 2000)
      assert.isTrue(posted.slice(1).some((message) => message.content.startsWith("```python\n")))
      assert.strictEqual(posted[0]?.replyTo, trigger.id)
      // Every write carried allowed_mentions that parse nothing.
      const writes = fake.requests.filter((request) => /\/channels\/\d+\/messages/.test(request.path) && (request.method === "POST" || request.method === "PATCH"))
      assert.isAbove(writes.length, 3)
      for (const request of writes) assert.deepStrictEqual(request.body?.["allowed_mentions"], { parse: [], replied_user: false })
      assert.isTrue(writes.every((request) => request.status === 200))
    }))

  it.live("a 429 on an edit is waited out (Retry-After honoured) and the latest text still lands", () =>
    Effect.gen(function*() {
      const { client, fake, gauge } = yield* liveDiscord()
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* channelReplyTarget(channel, undefined)
      const reply = yield* makeDiscordReplySink(target, { minEditInterval: "50 millis", awaitBucket: gauge.awaitReset })
      fake.failNext({ method: "PATCH", path: /^\/channels\/\d+\/messages\/\d+$/, status: 429, retryAfter: 1 })
      const started = Date.now()
      const text = Array.from({ length: 60 }, (_, i) => `token${i} `).join("")
      yield* stream(reply.sink.write, text, 8, "10 millis")
      assert.strictEqual(yield* reply.sink.endPass("flush"), text)
      const elapsed = Date.now() - started
      const patches = fake.requestsTo("PATCH", /^\/channels\/\d+\/messages\/\d+$/)
      assert.strictEqual(patches.filter((request) => request.status === 429).length, 1)
      assert.isAtLeast(elapsed, 1000)
      assert.strictEqual(fake.botMessages(fake.channel.id)[0]?.content, text)
    }))

  it.live("a message deleted mid-stream (10008 on edit) is posted again with the latest text", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* liveDiscord()
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const reply = yield* makeDiscordReplySink(yield* channelReplyTarget(channel, undefined), { minEditInterval: "20 millis" })
      yield* reply.sink.write("First words ")
      yield* waitUntil(fake, "first message", () => fake.botMessages(fake.channel.id).length === 1)
      const [first] = fake.botMessages(fake.channel.id)
      if (first !== undefined) first.deleted = true
      yield* reply.sink.write("and the rest of the answer.")
      assert.strictEqual(yield* reply.sink.endPass("flush"), "First words and the rest of the answer.")
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["First words and the rest of the answer."])
      assert.isTrue(fake.requestsTo("PATCH", /messages/).some((request) => request.status === 404))
    }))

  it.live("a small message bucket: edits follow the rate-limit headers, no 429, final text exact", () =>
    Effect.gen(function*() {
      const { client, fake, gauge } = yield* liveDiscord({ messageBucket: { limit: 3, windowMs: 600 } })
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* channelReplyTarget(channel, undefined)
      const reply = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis", awaitBucket: gauge.awaitReset })
      const text = Array.from({ length: 120 }, (_, i) => `w${i} `).join("")
      yield* stream(reply.sink.write, text, 6, "15 millis")
      assert.strictEqual(yield* reply.sink.endPass("flush"), text)
      const writes = fake.requests.filter((request) => /^\/channels\/\d+\/messages/.test(request.path) && request.method !== "GET")
      assert.strictEqual(writes.filter((request) => request.status === 429).length, 0)
      // ≈ 2.4 s of streaming at 3 writes per 0.6 s: a dozen or so writes, not 120.
      assert.isAtMost(writes.length, 20)
      assert.strictEqual(fake.botMessages(fake.channel.id)[0]?.content, text)
    }))

  it.live("a persona speaks through a cached channel webhook; a deleted webhook (10015) is recreated", () =>
    Effect.gen(function*() {
      const { client, fake, webhooks } = yield* liveDiscord()
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* webhooks.target(channel, persona, yield* channelReplyTarget(channel, undefined))
      const first = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis" })
      yield* stream(first.sink.write, "Hello from the persona. ".repeat(5), 10)
      yield* first.sink.endPass("flush")
      const [webhook] = fake.webhooks(fake.channel.id)
      assert.isDefined(webhook)
      const [message] = fake.botMessages(fake.channel.id)
      assert.strictEqual(message?.webhookId, webhook?.id)
      assert.strictEqual(message?.author.username, "Nerine")
      assert.strictEqual(message?.content, "Hello from the persona. ".repeat(5))
      const execute = fake.requestsTo("POST", /^\/webhooks\/\d+\/[^/]+$/)[0]
      assert.strictEqual(execute?.body?.["avatar_url"], persona.avatarUrl)
      assert.deepStrictEqual(execute?.body?.["allowed_mentions"], { parse: [], replied_user: false })

      fake.deleteWebhook(webhook?.id ?? "")
      const second = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis" })
      yield* second.sink.write("After the webhook was deleted.")
      yield* second.sink.endPass("flush")
      assert.isTrue(fake.requestsTo("POST", /^\/webhooks\//).some((request) => request.status === 404))
      const [recreated] = fake.webhooks(fake.channel.id)
      assert.isDefined(recreated)
      assert.notStrictEqual(recreated?.id, webhook?.id)
      const last = fake.botMessages(fake.channel.id).at(-1)
      assert.strictEqual(last?.content, "After the webhook was deleted.")
      assert.strictEqual(last?.webhookId, recreated?.id)
      // Cached: one webhook creation per (re)creation, not one per message.
      assert.strictEqual(fake.requestsTo("POST", /^\/channels\/\d+\/webhooks$/).length, 2)
    }))

  it.live("in a thread the persona uses the parent channel's webhook with thread_id", () =>
    Effect.gen(function*() {
      const { client, fake, webhooks } = yield* liveDiscord()
      const thread = fake.addThread(fake.channel, "a thread")
      yield* waitUntil(fake, "thread cached", () => client.channels.cache.has(thread.id))
      const channel = yield* sendableChannel(client, fake, thread.id)
      const target = yield* webhooks.target(channel, persona, yield* channelReplyTarget(channel, undefined))
      const reply = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis" })
      yield* stream(reply.sink.write, "Replying inside the thread, streamed in pieces. ".repeat(3), 12)
      yield* reply.sink.endPass("flush")
      assert.strictEqual(fake.webhooks(thread.id).length, 0)
      assert.strictEqual(fake.webhooks(fake.channel.id).length, 1)
      const executes = fake.requestsTo("POST", /^\/webhooks\//)
      assert.isTrue(executes.length >= 1 && executes.every((request) => request.query.get("thread_id") === thread.id))
      const edits = fake.requestsTo("PATCH", /^\/webhooks\//)
      assert.isTrue(edits.every((request) => request.query.get("thread_id") === thread.id))
      assert.strictEqual(fake.botMessages(thread.id)[0]?.content, "Replying inside the thread, streamed in pieces. ".repeat(3))
    }))

  it.live("without Manage Webhooks the persona falls back to plain bot messages", () =>
    Effect.gen(function*() {
      const { client, fake, webhooks } = yield* liveDiscord({ botPermissions: botPermissions & ~Permission.ManageWebhooks })
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* webhooks.target(channel, persona, yield* channelReplyTarget(channel, undefined))
      const reply = yield* makeDiscordReplySink(target)
      yield* reply.sink.write("Plain bot message.")
      yield* reply.sink.endPass("flush")
      assert.strictEqual(fake.requestsTo("POST", /webhooks/).length, 0)
      const [message] = fake.botMessages(fake.channel.id)
      assert.strictEqual(message?.author.id, fake.bot.id)
      assert.strictEqual(message?.content, "Plain bot message.")
    }))

  it.live("webhook creation refused at run time (50013) also falls back, and is not retried per message", () =>
    Effect.gen(function*() {
      const { client, fake, webhooks } = yield* liveDiscord()
      fake.channel.noWebhooks = true
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      for (const text of ["One.", "Two."]) {
        const target = yield* webhooks.target(channel, persona, yield* channelReplyTarget(channel, undefined))
        const reply = yield* makeDiscordReplySink(target)
        yield* reply.sink.write(text)
        yield* reply.sink.endPass("flush")
      }
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["One.", "Two."])
      assert.strictEqual(fake.requestsTo("POST", /^\/channels\/\d+\/webhooks$/).length, 1)
    }))

  it.live("[§5 70] a deleted channel (10003) surfaces as DeliveryError channel_deleted; missing access (50001) as missing_access", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* liveDiscord()
      const other = fake.addChannel({ kind: "text", name: "other" })
      fake.dispatch("CHANNEL_CREATE", { id: other.id, type: 0, guild_id: fake.guild.id, name: "other", position: 1, permission_overwrites: [] }, fake.guild.id)
      yield* waitUntil(fake, "channel cached", () => client.channels.cache.has(other.id))
      const gone = yield* sendableChannel(client, fake, fake.channel.id)
      const locked = yield* sendableChannel(client, fake, other.id)
      fake.channel.deleted = true
      other.noAccess = true
      for (const [channel, reason] of [[gone, "channel_deleted"], [locked, "missing_access"]] as const) {
        const reply = yield* makeDiscordReplySink(yield* channelReplyTarget(channel, undefined))
        yield* reply.sink.write("Hello")
        const ended = yield* Effect.result(reply.sink.endPass("flush"))
        assert.isTrue(ended._tag === "Failure" && ended.failure.reason === reason, JSON.stringify(ended))
      }
    }))

  for (const path of ["bot", "webhook"] as const) {
    for (const [code, status, what] of [[10008, 404, "the message was deleted"], [30046, 400, "the message is too old to edit"], [10015, 404, "the webhook is gone"]] as const) {
      it.live(`[issue 11] ${path} path: an edit refused mid-stream with ${code} (${what}) — the reply continues, no sentence lost or repeated`, () =>
        Effect.gen(function*() {
          const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status, code, skip: 2 })
          assert.strictEqual(run.fake.pendingFaults, 0, "the refusal was answered")
          assert.deepStrictEqual(run.ended, Result.succeed(sentenceText))
          assert.deepStrictEqual([run.lost, run.repeated], [0, 0], JSON.stringify(run.contents))
          assert.strictEqual(run.contents.join(""), sentenceText)
          if (path === "webhook") {
            const posters = run.fake.botMessages(run.fake.channel.id).map((message) => message.webhookId)
            assert.isTrue(posters.every((id) => id !== undefined), "every message is the persona's")
            // A deleted webhook: the reply went on through a new one.
            assert.strictEqual(new Set(posters).size, code === 10015 ? 2 : 1)
          }
        }))
    }

    it.live(`[issue 11] ${path} path: 50013 (missing permissions) mid-stream is final — the sink fails with DeliveryError missing_access`, () =>
      Effect.gen(function*() {
        const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status: 403, code: 50013, skip: 2 })
        assert.isTrue(Result.isFailure(run.ended) && run.ended.failure.reason === "missing_access", JSON.stringify(run.ended))
        // Nothing tried again after a final refusal.
        assert.strictEqual(run.fake.requests.filter((request) => request.method === "PATCH" && request.status === 403).length, 1)
      }))

    for (const [code, status, reason] of [[10003, 404, "channel_deleted"], [50001, 403, "missing_access"]] as const) {
      it.live(`[issue 11] ${path} path: ${code} mid-stream is final — the sink fails with DeliveryError ${reason}, nothing tried again`, () =>
        Effect.gen(function*() {
          const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status, code, skip: 2 })
          assert.isTrue(Result.isFailure(run.ended) && run.ended.failure.reason === reason, JSON.stringify(run.ended))
          assert.strictEqual(run.fake.requests.filter((request) => request.status === status).length, 1)
          // The text before the refusal stays; nothing after it was posted elsewhere.
          assert.strictEqual(run.fake.requests.filter((request) => request.method === "POST" && postRoute[path].test(request.path)).length, 1)
        }))
    }

    it.live(`[issue 11] ${path} path: a connection cut mid-stream (no answer at all) is transient — tried again and delivered in full`, () =>
      Effect.gen(function*() {
        const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status: 0, cutConnection: true, skip: 2, times: 2 })
        assert.strictEqual(run.fake.pendingFaults, 0, "both cuts happened")
        assert.deepStrictEqual(run.ended, Result.succeed(sentenceText))
        assert.deepStrictEqual([run.lost, run.repeated], [0, 0], JSON.stringify(run.contents))
        assert.strictEqual(run.contents.join(""), sentenceText)
      }))

    it.live(`[issue 11] ${path} path: connections cut for good end in DeliveryError failed once the retries are used up`, () =>
      Effect.gen(function*() {
        const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status: 0, cutConnection: true, skip: 2, times: 1000 })
        assert.isTrue(Result.isFailure(run.ended) && run.ended.failure.reason === "failed", JSON.stringify(run.ended))
        // 1 + 2 tries of the sink (a final failure would be tried once).
        assert.strictEqual(run.fake.requests.filter((request) => request.method === "PATCH" && request.status === 0).length, 3)
      }))

    it.live(`[issue 11] ${path} path: 5xx mid-stream beyond discord.js's own retries is tried again with backoff and delivered`, () =>
      Effect.gen(function*() {
        // discord.js tries 4 times at once; the 5th 503 reaches the sink's own retry, which gets through.
        const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status: 503, skip: 2, times: 5 })
        assert.deepStrictEqual(run.ended, Result.succeed(sentenceText))
        assert.strictEqual(run.fake.requests.filter((request) => request.status === 503).length, 5)
        assert.strictEqual(run.contents.join(""), sentenceText)
      }))

    it.live(`[issue 11] ${path} path: 5xx that never stops ends in DeliveryError failed once the retries are used up`, () =>
      Effect.gen(function*() {
        const run = yield* streamWithFault(path, { method: "PATCH", path: editRoute[path], status: 502, skip: 2, times: 1000 })
        assert.isTrue(Result.isFailure(run.ended) && run.ended.failure.reason === "failed", JSON.stringify(run.ended))
        // 1 + 2 tries of the sink, 4 requests each (discord.js's retries).
        assert.strictEqual(run.fake.requests.filter((request) => request.status === 502).length, 12)
      }))
  }

  it.live("[issue 11] bot path: a post whose answer was lost (5xx after Discord created it) is tried again under the same nonce — no second copy", () =>
    Effect.gen(function*() {
      const run = yield* streamWithFault("bot", { method: "POST", path: postRoute.bot, status: 503, applied: true, times: 4 })
      assert.deepStrictEqual(run.ended, Result.succeed(sentenceText))
      assert.strictEqual(run.fake.requests.filter((request) => request.status === 503).length, 4)
      assert.deepStrictEqual([run.lost, run.repeated], [0, 0], JSON.stringify(run.contents))
      assert.strictEqual(run.contents.join(""), sentenceText)
    }))

  it.live("[issue 11] webhook path: a post whose answer was lost (5xx after Discord created it, discord.js's retries too) — the first copy is kept and brought up to date, the others deleted, no second copy", () =>
    Effect.gen(function*() {
      // Webhooks take no nonce: each of discord.js's 4 tries creates a message and answers 503.
      const run = yield* streamWithFault("webhook", { method: "POST", path: postRoute.webhook, status: 503, applied: true, times: 4 })
      assert.deepStrictEqual(run.ended, Result.succeed(sentenceText))
      assert.strictEqual(run.fake.requests.filter((request) => request.status === 503).length, 4)
      assert.deepStrictEqual([run.lost, run.repeated], [0, 0], JSON.stringify(run.contents))
      assert.strictEqual(run.contents.join(""), sentenceText)
      // The kept copy is the first one created; the three later copies were deleted, not left behind.
      const created = run.fake.requests.filter((request) => request.method === "POST" && postRoute.webhook.test(request.path))
      assert.isAtLeast(created.length, 4)
      assert.strictEqual(run.fake.requests.filter((request) => request.method === "DELETE" && /\/messages\/\d+$/.test(request.path)).length, 3)
    }))

  it.live("[issue 11] webhook path: a lost post's copy is brought up to the text written while the post was retried", () =>
    Effect.gen(function*() {
      const { client, fake, webhooks } = yield* liveDiscord()
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const target = yield* webhooks.target(channel, persona, yield* channelReplyTarget(channel, undefined))
      const reply = yield* makeDiscordReplySink(target, { minEditInterval: "20 millis", transientBaseDelay: "300 millis", transientRetries: 2 })
      fake.failNext({ method: "POST", path: postRoute.webhook, status: 503, applied: true, times: 4 })
      yield* reply.sink.write("Hello ")
      yield* waitUntil(fake, "discord.js's four tries of the first post", () => fake.requests.filter((request) => request.status === 503).length === 4)
      // Written during the sink's backoff; the retry is the last write of the pass.
      yield* reply.sink.write("world.")
      assert.deepStrictEqual(yield* Effect.result(reply.sink.endPass("flush")), Result.succeed("Hello world."))
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["Hello world."])
    }))

  it.live("[issue 11] the chosen sticker goes out only with a completed reply (not after /kill, an interrupt, an error or a timeout)", () =>
    Effect.gen(function*() {
      const stickerId = "123456789012345678"
      const { client, fake } = yield* liveDiscord({ stickers: [{ id: stickerId, name: "wave" }] })
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const statuses: ReadonlyArray<TurnStatus> = ["stopped_by_user", "follow_up_interrupt", "error", "timeout", "completed"]
      for (const status of statuses) {
        const reply = yield* makeDiscordReplySink(yield* channelReplyTarget(channel, undefined))
        yield* reply.sink.write(`A reply that ended as ${status}.`)
        yield* reply.sink.endPass("flush")
        const result: TurnResult = {
          status,
          text: `A reply that ended as ${status}.`,
          iterations: 1,
          attempts: [],
          toolCalls: [],
          usage: undefined,
          toolResponseDelivered: false,
          stickerSelection: { id: stickerId, name: "wave" }
        }
        yield* finishReply(reply, channel, result)
      }
      const withSticker = fake.botMessages(fake.channel.id).filter((message) => message.stickerIds.length > 0)
      assert.strictEqual(withSticker.length, 1)
      // Right after the completed reply, the last message of all.
      assert.strictEqual(fake.botMessages(fake.channel.id).at(-1)?.stickerIds[0], stickerId)
      assert.strictEqual(fake.botMessages(fake.channel.id).at(-2)?.content, "A reply that ended as completed.")
    }))

  it.live("typing is sent while the turn runs and stops for good when its fiber ends", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* liveDiscord()
      const channel = yield* sendableChannel(client, fake, fake.channel.id)
      const typing = yield* Effect.forkChild(keepTyping(Effect.tryPromise(() => channel.sendTyping()), Effect.succeed(true), "100 millis"))
      yield* waitUntil(fake, "three typing requests", () => fake.requestsTo("POST", /\/typing$/).length >= 3)
      yield* Fiber.interrupt(typing)
      const count = fake.requestsTo("POST", /\/typing$/).length
      yield* Effect.sleep(Duration.millis(350))
      assert.strictEqual(fake.requestsTo("POST", /\/typing$/).length, count)
    }))
})
