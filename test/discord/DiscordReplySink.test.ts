import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Option, Ref, TestClock } from "effect"
import { DeliveryError } from "../../src/loop/ResponseSink"
import { UserNotice } from "../../src/loop/UserNotice"
import { commitPoint, makeDiscordReplySink, STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { splitMessage } from "../../src/discord/messageSplitter"
import type { OutgoingMessage, ReplyTarget } from "../../src/discord/ReplyTarget"

interface Request {
  readonly kind: "send" | "edit"
  readonly id: string
  readonly message: OutgoingMessage
  readonly at: number
}

/** A ReplyTarget in memory: every request takes `latency` on the Clock; tracks concurrency. */
const memoryTarget = (options: { readonly latency?: Duration.DurationInput; readonly failSendsWith?: DeliveryError } = {}) =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<Request>>([])
    const contents = yield* Ref.make(new Map<string, OutgoingMessage>())
    const inFlight = yield* Ref.make(0)
    const maxInFlight = yield* Ref.make(0)
    const counter = yield* Ref.make(0)
    const request = <A>(body: Effect.Effect<A, DeliveryError>) =>
      Effect.gen(function*() {
        const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
        yield* Ref.update(maxInFlight, (max) => Math.max(max, now))
        if (options.latency !== undefined) yield* Effect.sleep(options.latency)
        return yield* body
      }).pipe(Effect.ensuring(Ref.update(inFlight, (n) => n - 1)))
    const target: ReplyTarget = {
      channelId: "c1",
      rateLimitKeys: Effect.succeed(["c1"]),
      send: (message) =>
        request(Effect.gen(function*() {
          if (options.failSendsWith !== undefined) return yield* Effect.fail(options.failSendsWith)
          const id = `m${yield* Ref.updateAndGet(counter, (n) => n + 1)}`
          const at = yield* Clock.currentTimeMillis
          yield* Ref.update(requests, (all): ReadonlyArray<Request> => [...all, { kind: "send", id, message, at }])
          yield* Ref.update(contents, (map) => new Map(map).set(id, message))
          return id
        })),
      edit: (id, content) =>
        request(Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const message: OutgoingMessage = { _tag: "Text", content }
          yield* Ref.update(requests, (all): ReadonlyArray<Request> => [...all, { kind: "edit", id, message, at }])
          yield* Ref.update(contents, (map) => new Map(map).set(id, message))
          return id
        }))
    }
    const texts = Effect.map(Ref.get(contents), (map) =>
      [...map.values()].flatMap((message) => (message._tag === "Text" ? [message.content] : [])))
    return { target, requests: Ref.get(requests), contents: Ref.get(contents), texts, maxInFlight: Ref.get(maxInFlight) }
  })

/** Writes `deltas` one every `every` (forked; drive it with TestClock). */
const streamDeltas = (write: (delta: string) => Effect.Effect<void, DeliveryError>, deltas: ReadonlyArray<string>, every: Duration.DurationInput) =>
  Effect.forEach(deltas, (delta) => Effect.zipRight(write(delta), Effect.sleep(every)), { discard: true })

const tokens = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

describe("DiscordReplySink", () => {
  // TestClock wakes cost a few real milliseconds each, so deltas come ~100 at a time.
  it.scoped("[§4 delivery] 300 words over 15 s: about one edit per second, one request in flight, final text exact", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "100 millis" })
      const reply = yield* makeDiscordReplySink(memory.target)
      const text = Array.from({ length: 300 }, (_, i) => `word${i} `).join("")
      const writer = yield* Effect.fork(streamDeltas(reply.sink.write, tokens(text, 21), "150 millis"))
      yield* TestClock.adjust("20 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.fork(reply.sink.endPass("flush"))
      yield* TestClock.adjust("1 second")
      const passText = yield* Fiber.join(ending)
      assert.strictEqual(passText, text)
      const requests = yield* memory.requests
      const edits = requests.filter((request) => request.kind === "edit").length
      // 15 s of streaming at ≤ 1 edit/s per message (+ final edits of sealed messages).
      assert.isAtMost(edits, 20)
      assert.isAtLeast(edits, 10)
      assert.strictEqual(yield* memory.maxInFlight, 1)
      assert.deepStrictEqual(yield* memory.texts, [...splitMessage(text)])
    }))

  it.scoped("[§4 delivery] a slow Discord coalesces edits: intermediate texts are skipped, the latest wins", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "3 seconds" })
      const reply = yield* makeDiscordReplySink(memory.target, { minEditInterval: 0 })
      const text = Array.from({ length: 100 }, (_, i) => `w${i} `).join("")
      const writer = yield* Effect.fork(streamDeltas(reply.sink.write, tokens(text, 4), "100 millis"))
      yield* TestClock.adjust("12 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.fork(reply.sink.endPass("flush"))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(ending), text)
      const requests = yield* memory.requests
      // 10 s of text at 3 s per request: a handful of requests, not one per token.
      assert.isAtMost(requests.length, 6)
      assert.strictEqual(yield* memory.maxInFlight, 1)
      assert.deepStrictEqual(yield* memory.texts, [text.trimEnd() + " "])
    }))

  it.scoped("[§4 delivery] a 5000-character reply with a code block streams into the splitter's exact messages", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "30 millis" })
      const reply = yield* makeDiscordReplySink(memory.target)
      const code = Array.from({ length: 90 }, (_, i) => `    total += weight(${i}) * value(${i}); // step ${i}`).join("\n")
      const text = `Here is the implementation you asked for.\n\n\`\`\`rust\nfn main() {\n${code}\n}\n\`\`\`\n\n${"And a closing explanation. ".repeat(40)}`
      assert.isAbove(text.length, 5000)
      const writer = yield* Effect.fork(streamDeltas(reply.sink.write, tokens(text, 53), "100 millis"))
      yield* TestClock.adjust("12 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.fork(reply.sink.endPass("flush"))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(ending)
      const texts = yield* memory.texts
      assert.deepStrictEqual(texts, [...splitMessage(text)])
      assert.isTrue(texts.length >= 3)
      for (const content of texts) assert.isAtMost(content.length, 2000)
      assert.isTrue(texts.slice(1, -1).some((content) => content.startsWith("```rust\n")))
    }))

  it.scoped("[§2.8] discard drops only the unfinished word; endPass returns exactly the pass's delivered text", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Hello there, gene")
      const discarded = yield* Effect.fork(reply.sink.endPass("discard"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(discarded), "Hello there, ")
      yield* reply.sink.write("Second pass.")
      const flushed = yield* Effect.fork(reply.sink.endPass("flush"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(flushed), "Second pass.")
      assert.strictEqual(yield* reply.sink.delivered, "Hello there, Second pass.")
      // Each pass starts its own message.
      assert.deepStrictEqual(yield* memory.texts, ["Hello there, ", "Second pass."])
    }))

  it.scoped("notices become embeds below the text; text after a notice starts a new message", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Before the notice. ")
      yield* reply.sink.notice(UserNotice.StillWorking({ iteration: 20 }))
      yield* reply.sink.write("After it.")
      const ending = yield* Effect.fork(reply.sink.endPass("flush"))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(ending)
      // Messages in posting order, each with its final content.
      const final = [...(yield* memory.contents).values()]
      assert.strictEqual(final.length, 3)
      assert.deepStrictEqual(final[0], { _tag: "Text", content: "Before the notice. " })
      assert.strictEqual(final[1]?._tag, "Embed")
      if (final[1]?._tag === "Embed") assert.include(final[1].embed.description ?? "", "/kill")
      assert.deepStrictEqual(final[2], { _tag: "Text", content: "After it." })
    }))

  it.scoped("[§5 70] a deleted channel fails the next write and the pass with channel_deleted", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ failSendsWith: new DeliveryError({ reason: "channel_deleted", detail: "Unknown Channel" }) })
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Hello ")
      yield* TestClock.adjust("1 second")
      const write = yield* Effect.either(reply.sink.write("again "))
      assert.isTrue(write._tag === "Left" && write.left.reason === "channel_deleted")
      const end = yield* Effect.either(reply.sink.endPass("flush"))
      assert.isTrue(end._tag === "Left" && end.left.reason === "channel_deleted")
    }))

  it.scoped("markStopped adds the stopped marker to the last message once; whitespace alone is never sent", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("\n\n")
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(yield* memory.requests, [])
      yield* reply.sink.write("Partial answer ")
      const stopping = yield* Effect.fork(Effect.zipRight(reply.markStopped, reply.sink.notice(UserNotice.Stopped())))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(stopping)
      const drained = yield* Effect.fork(reply.drain)
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(drained)
      assert.deepStrictEqual(yield* memory.texts, [`\n\nPartial answer ${STOPPED_MARKER}`])
      assert.strictEqual(Option.isSome(Option.fromNullable((yield* reply.messageIds)[0])), true)
    }))

  it("commitPoint shows whole words, and long runs without spaces", () => {
    assert.strictEqual(commitPoint("hello wor"), 6)
    assert.strictEqual(commitPoint("unfinished"), 0)
    assert.strictEqual(commitPoint("x".repeat(250)), 250)
    assert.strictEqual(commitPoint(`${"x".repeat(249)}\ud83d`), 249)
  })
})
