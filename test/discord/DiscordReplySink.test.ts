import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Result, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { ReplyWriteError, type WriteFailureKind } from "../../src/discord/discordErrors"
import type { DeliveryError } from "../../src/loop/ResponseSink"
import { UserNotice } from "../../src/loop/UserNotice"
import { commitPoint, makeDiscordReplySink, STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { CUT_MARKER } from "../../src/discord/replyLayout"
import { splitMessage } from "../../src/discord/messageSplitter"
import type { OutgoingMessage, ReplyTarget } from "../../src/discord/ReplyTarget"
import { makeLogCapture } from "../support/tools/logCapture"

interface Request {
  readonly kind: "send" | "edit"
  readonly id: string
  readonly message: OutgoingMessage
  readonly at: number
}

/** A request the target is about to answer: the nth of its kind (from 1). */
interface Attempt {
  readonly kind: "send" | "edit"
  readonly ordinal: number
  readonly id: string | undefined
  readonly content: string | undefined
}

const refusal = (kind: WriteFailureKind, reason: ReplyWriteError["reason"] = "failed") => new ReplyWriteError({ kind, reason, detail: `scripted ${kind}` })

/**
 * A ReplyTarget in memory: every request takes `latency` on the Clock; tracks concurrency.
 * `refuse` answers chosen requests with a failure instead (a `gone` one deletes the message,
 * as Discord would have).
 */
const memoryTarget = (options: { readonly latency?: Duration.Input; readonly refuse?: (attempt: Attempt) => ReplyWriteError | undefined } = {}) =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<Request>>([])
    const attempts = yield* Ref.make<ReadonlyArray<Attempt & { readonly at: number; readonly refused: boolean }>>([])
    const contents = yield* Ref.make(new Map<string, OutgoingMessage>())
    const inFlight = yield* Ref.make(0)
    const maxInFlight = yield* Ref.make(0)
    const counter = yield* Ref.make(0)
    const ordinals = yield* Ref.make({ send: 0, edit: 0 })
    const request = <A>(kind: "send" | "edit", id: string | undefined, content: string | undefined, body: Effect.Effect<A, ReplyWriteError>) =>
      Effect.gen(function*() {
        const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
        yield* Ref.update(maxInFlight, (max) => Math.max(max, now))
        if (options.latency !== undefined) yield* Effect.sleep(options.latency)
        const ordinal = (yield* Ref.updateAndGet(ordinals, (all) => ({ ...all, [kind]: all[kind] + 1 })))[kind]
        const attempt: Attempt = { kind, ordinal, id, content }
        const refused = options.refuse?.(attempt)
        const at = yield* Clock.currentTimeMillis
        yield* Ref.update(attempts, (all) => [...all, { ...attempt, at, refused: refused !== undefined }])
        if (refused !== undefined) {
          if (refused.kind === "gone" && id !== undefined) yield* Ref.update(contents, (map) => {
            const next = new Map(map)
            next.delete(id)
            return next
          })
          return yield* Effect.fail(refused)
        }
        return yield* body
      }).pipe(Effect.ensuring(Ref.update(inFlight, (n) => n - 1)))
    const target: ReplyTarget = {
      channelId: "c1",
      rateLimitKeys: Effect.succeed(["c1"]),
      send: (message) =>
        request("send", undefined, message._tag === "Text" ? message.content : undefined, Effect.gen(function*() {
          const id = `m${yield* Ref.updateAndGet(counter, (n) => n + 1)}`
          const at = yield* Clock.currentTimeMillis
          yield* Ref.update(requests, (all): ReadonlyArray<Request> => [...all, { kind: "send", id, message, at }])
          yield* Ref.update(contents, (map) => new Map(map).set(id, message))
          return id
        })),
      edit: (id, content) =>
        request("edit", id, content, Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const message: OutgoingMessage = { _tag: "Text", content }
          yield* Ref.update(requests, (all): ReadonlyArray<Request> => [...all, { kind: "edit", id, message, at }])
          yield* Ref.update(contents, (map) => new Map(map).set(id, message))
        }))
    }
    const texts = Effect.map(Ref.get(contents), (map) =>
      [...map.values()].flatMap((message) => (message._tag === "Text" ? [message.content] : [])))
    return { target, requests: Ref.get(requests), attempts: Ref.get(attempts), contents: Ref.get(contents), texts, maxInFlight: Ref.get(maxInFlight) }
  })

/** Writes `deltas` one every `every` (forked; drive it with TestClock). */
const streamDeltas = (write: (delta: string) => Effect.Effect<void, DeliveryError>, deltas: ReadonlyArray<string>, every: Duration.Input) =>
  Effect.forEach(deltas, (delta) => Effect.andThen(write(delta), Effect.sleep(every)), { discard: true })

const tokens = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

describe("DiscordReplySink", () => {
  // TestClock wakes cost a few real milliseconds each, so deltas come ~100 at a time.
  it.effect("[§4 delivery] 300 words over 15 s: about one edit per second, one request in flight, final text exact", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "100 millis" })
      const reply = yield* makeDiscordReplySink(memory.target)
      const text = Array.from({ length: 300 }, (_, i) => `word${i} `).join("")
      const writer = yield* Effect.forkChild(streamDeltas(reply.sink.write, tokens(text, 21), "150 millis"))
      yield* TestClock.adjust("20 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.forkChild(reply.sink.endPass("flush"))
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

  it.effect("[§4 delivery] a slow Discord coalesces edits: intermediate texts are skipped, the latest wins", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "3 seconds" })
      const reply = yield* makeDiscordReplySink(memory.target, { minEditInterval: 0 })
      const text = Array.from({ length: 100 }, (_, i) => `w${i} `).join("")
      const writer = yield* Effect.forkChild(streamDeltas(reply.sink.write, tokens(text, 4), "100 millis"))
      yield* TestClock.adjust("12 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.forkChild(reply.sink.endPass("flush"))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(ending), text)
      const requests = yield* memory.requests
      // 10 s of text at 3 s per request: a handful of requests, not one per token.
      assert.isAtMost(requests.length, 6)
      assert.strictEqual(yield* memory.maxInFlight, 1)
      assert.deepStrictEqual(yield* memory.texts, [text.trimEnd() + " "])
    }))

  it.effect("[§4 delivery] a 5000-character reply with a code block streams into the splitter's exact messages", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ latency: "30 millis" })
      const reply = yield* makeDiscordReplySink(memory.target)
      const code = Array.from({ length: 90 }, (_, i) => `    total += weight(${i}) * value(${i}); // step ${i}`).join("\n")
      const text = `Here is the implementation you asked for.\n\n\`\`\`rust\nfn main() {\n${code}\n}\n\`\`\`\n\n${"And a closing explanation. ".repeat(40)}`
      assert.isAbove(text.length, 5000)
      const writer = yield* Effect.forkChild(streamDeltas(reply.sink.write, tokens(text, 53), "100 millis"))
      yield* TestClock.adjust("12 seconds")
      yield* Fiber.join(writer)
      const ending = yield* Effect.forkChild(reply.sink.endPass("flush"))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(ending)
      const texts = yield* memory.texts
      assert.deepStrictEqual(texts, [...splitMessage(text)])
      assert.isTrue(texts.length >= 3)
      for (const content of texts) assert.isAtMost(content.length, 2000)
      assert.isTrue(texts.slice(1, -1).some((content) => content.startsWith("```rust\n")))
    }))

  it.effect("[§2.8] discard drops only the unfinished word; endPass returns exactly the pass's delivered text", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Hello there, gene")
      const discarded = yield* Effect.forkChild(reply.sink.endPass("discard"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(discarded), "Hello there, ")
      yield* reply.sink.write("Second pass.")
      const flushed = yield* Effect.forkChild(reply.sink.endPass("flush"))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(flushed), "Second pass.")
      assert.strictEqual(yield* reply.sink.delivered, "Hello there, Second pass.")
      // Each pass starts its own message.
      assert.deepStrictEqual(yield* memory.texts, ["Hello there, ", "Second pass."])
    }))

  it.effect("notices become embeds below the text; text after a notice starts a new message", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Before the notice. ")
      yield* reply.sink.notice(UserNotice.StillWorking({ iteration: 20 }))
      yield* reply.sink.write("After it.")
      const ending = yield* Effect.forkChild(reply.sink.endPass("flush"))
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

  it.effect("[§5 70] a deleted channel fails the next write and the pass with channel_deleted", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: ({ kind }) => (kind === "send" ? refusal("final", "channel_deleted") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Hello ")
      yield* TestClock.adjust("1 second")
      const write = yield* Effect.result(reply.sink.write("again "))
      assert.isTrue(write._tag === "Failure" && write.failure.reason === "channel_deleted")
      const end = yield* Effect.result(reply.sink.endPass("flush"))
      assert.isTrue(end._tag === "Failure" && end.failure.reason === "channel_deleted")
    }))

  it.effect("markStopped adds the stopped marker to the last message once; whitespace alone is never sent", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("\n\n")
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(yield* memory.requests, [])
      yield* reply.sink.write("Partial answer ")
      const stopping = yield* Effect.forkChild(Effect.andThen(reply.markStopped, reply.sink.notice(UserNotice.Stopped())))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(stopping)
      const drained = yield* Effect.forkChild(reply.drain)
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(drained)
      assert.deepStrictEqual(yield* memory.texts, [`\n\nPartial answer ${STOPPED_MARKER}`])
      assert.strictEqual(Option.isSome(Option.fromNullishOr((yield* reply.messageIds)[0])), true)
    }))


  const sentences = (count: number) => Array.from({ length: count }, (_, i) => `This is sentence number ${i + 1}, with a few more words.`).join(" ") + " "
  /** How often each numbered sentence appears across `texts` (split at whitespace, so joined as they are): [lost, repeated]. */
  const tally = (texts: ReadonlyArray<string>, count: number): readonly [number, number] => {
    const all = texts.join("")
    let lost = 0
    let repeated = 0
    for (let n = 1; n <= count; n++) {
      const seen = all.split(`sentence number ${n},`).length - 1
      if (seen === 0) lost += 1
      if (seen > 1) repeated += seen - 1
    }
    return [lost, repeated]
  }

  /** Streams `text` (40-character deltas every 100 ms) and ends the pass, on the TestClock. */
  const deliver = (write: (delta: string) => Effect.Effect<void, DeliveryError>, endPass: Effect.Effect<string, DeliveryError>, text: string, budget: Duration.Input = "60 seconds") =>
    Effect.gen(function*() {
      const run = yield* Effect.forkChild(Effect.result(Effect.andThen(streamDeltas(write, tokens(text, 40), "100 millis"), endPass)))
      yield* TestClock.adjust(budget)
      return yield* Fiber.join(run)
    })

  it.effect("[issue 11] a transient failure is tried again after 1 s, then 2 s; the text lands in full", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: ({ kind, ordinal }) => (kind === "edit" && (ordinal === 3 || ordinal === 4) ? refusal("transient") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target)
      const text = sentences(30)
      const ended = yield* deliver(reply.sink.write, reply.sink.endPass("flush"), text)
      assert.deepStrictEqual(ended, Result.succeed(text))
      const edits = (yield* memory.attempts).filter((attempt) => attempt.kind === "edit")
      const [third, fourth, fifth] = [edits[2], edits[3], edits[4]]
      assert.isTrue(third?.refused === true && fourth?.refused === true && fifth?.refused === false)
      assert.strictEqual((fourth?.at ?? 0) - (third?.at ?? 0), 1000)
      assert.strictEqual((fifth?.at ?? 0) - (fourth?.at ?? 0), 2000)
      assert.deepStrictEqual(tally(yield* memory.texts, 30), [0, 0])
      assert.deepStrictEqual(yield* memory.texts, [...splitMessage(text)])
    }))

  it.effect("[issue 11] transient failures that never stop: 1 + 4 tries over 15 s, then the sink fails with DeliveryError failed", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: ({ kind, ordinal }) => (kind === "edit" && ordinal >= 2 ? refusal("transient") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target)
      const ended = yield* deliver(reply.sink.write, reply.sink.endPass("flush"), sentences(20))
      assert.isTrue(Result.isFailure(ended) && ended.failure.reason === "failed" && ended.failure.detail.includes("5 tries"), JSON.stringify(ended))
      const refused = (yield* memory.attempts).filter((attempt) => attempt.refused)
      assert.strictEqual(refused.length, 5)
      assert.strictEqual((refused[4]?.at ?? 0) - (refused[0]?.at ?? 0), 15_000)
      // Failed for good: the next write says so at once.
      const write = yield* Effect.result(reply.sink.write("more "))
      assert.isTrue(Result.isFailure(write) && write.failure.reason === "failed")
    }))

  for (const [kind, what] of [["gone", "deleted (10008)"], ["frozen", "no longer editable (30046 / 10015)"]] as const) {
    it.effect(`[issue 11] a message ${what} mid-stream: the reply continues, every sentence shown exactly once`, () =>
      Effect.gen(function*() {
        const memory = yield* memoryTarget({ refuse: (attempt) => (attempt.kind === "edit" && attempt.ordinal === 3 ? refusal(kind) : undefined) })
        const reply = yield* makeDiscordReplySink(memory.target)
        const text = sentences(60)
        const ended = yield* deliver(reply.sink.write, reply.sink.endPass("flush"), text)
        assert.deepStrictEqual(ended, Result.succeed(text))
        const texts = yield* memory.texts
        assert.deepStrictEqual(tally(texts, 60), [0, 0])
        assert.strictEqual(texts.join(""), text)
        // Posted again (gone) or continued below (frozen): one message more than the splitter's.
        assert.strictEqual(texts.length, splitMessage(text).length + (kind === "frozen" ? 1 : 0))
        for (const content of texts) assert.isAtMost(content.length, 2000)
      }))
  }

  it.effect("[issue 11] a sealed message whose final edit is refused keeps the text that moved on; the next message starts after it", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: (attempt) => (attempt.kind === "edit" && attempt.content === first ? refusal("frozen") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target, { minEditInterval: 0 })
      // 1500 characters, a paragraph break, 450 more: one message. 100 more: the split moves
      // back to the paragraph break, so the first message would lose the 450 it shows.
      const first = `${"alpha ".repeat(250)}\n\n`
      const second = "beta ".repeat(90)
      const third = "gamma ".repeat(20)
      yield* reply.sink.write(first)
      yield* reply.sink.write(second)
      const shown = yield* Effect.forkChild(reply.drain)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(shown)
      yield* reply.sink.write(third)
      const ended = yield* Effect.forkChild(Effect.result(reply.sink.endPass("flush")))
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(yield* Fiber.join(ended), Result.succeed(first + second + third))
      const texts = yield* memory.texts
      assert.deepStrictEqual(texts, [first + second, third])
      assert.isTrue((yield* memory.attempts).some((attempt) => attempt.refused))
    }))

  it.effect("[issue 11] a frozen message's stopped marker goes into a message of its own", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: (attempt) => (attempt.kind === "edit" && attempt.content?.endsWith(STOPPED_MARKER) === true ? refusal("frozen") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target)
      yield* reply.sink.write("Partial answer ")
      const stopping = yield* Effect.forkChild(reply.markStopped)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(stopping)
      assert.deepStrictEqual(yield* memory.texts, ["Partial answer ", STOPPED_MARKER.trim()])
    }))

  it.effect("[issue 11] a final refusal (50013) fails the pass with missing_access; nothing is tried again", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: (attempt) => (attempt.kind === "edit" && attempt.ordinal === 2 ? refusal("final", "missing_access") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target)
      const ended = yield* deliver(reply.sink.write, reply.sink.endPass("flush"), sentences(20))
      assert.isTrue(Result.isFailure(ended) && ended.failure.reason === "missing_access", JSON.stringify(ended))
      assert.strictEqual((yield* memory.attempts).filter((attempt) => attempt.kind === "edit").length, 2)
    }))

  it.effect("[issue 11] Discord refusing every edit: recovering has a budget, then the sink fails", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget({ refuse: (attempt) => (attempt.kind === "edit" ? refusal("gone") : undefined) })
      const reply = yield* makeDiscordReplySink(memory.target, { maxMessages: 4, minEditInterval: "100 millis" })
      const ended = yield* deliver(reply.sink.write, reply.sink.endPass("flush"), sentences(30))
      assert.isTrue(Result.isFailure(ended) && ended.failure.reason === "failed", JSON.stringify(ended))
      // 4 recoveries (the budget: max(3, maxMessages)), the 5th refusal ends it.
      assert.strictEqual((yield* memory.attempts).filter((attempt) => attempt.refused).length, 5)
    }))

  it.effect("[issue 11] DISCORD_MAX_MESSAGES_PER_TURN: a longer reply is cut with a visible marker; endPass returns what is shown", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target, { maxMessages: 2 })
      const text = sentences(120)
      assert.isAbove(splitMessage(text).length, 3)
      const logs = yield* makeLogCapture
      const ended = yield* logs.capture(deliver(reply.sink.write, reply.sink.endPass("flush"), text))
      assert.strictEqual((yield* logs.matching("cut at 2 messages (DISCORD_MAX_MESSAGES_PER_TURN)")).length, 1)
      const texts = yield* memory.texts
      assert.strictEqual(texts.length, 2)
      assert.isTrue(texts[1]?.endsWith(CUT_MARKER))
      for (const content of texts) assert.isAtMost(content.length, 2000)
      const shown = texts.join("").slice(0, -CUT_MARKER.length)
      assert.deepStrictEqual(ended, Result.succeed(shown))
      assert.isTrue(text.startsWith(shown))
      assert.strictEqual(yield* reply.sink.delivered, shown)
      // A later pass adds nothing.
      yield* reply.sink.write("More text after the cut. ")
      const later = yield* Effect.forkChild(reply.sink.endPass("flush"))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(later), "")
      assert.strictEqual((yield* memory.texts).length, 2)
    }))

  it.effect("[issue 11] DISCORD_MAX_MESSAGES_PER_TURN across passes: a pass beyond the cap shows the marker under the last message instead", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target, { maxMessages: 2 })
      const passes: Array<string> = []
      for (const text of ["First pass. ", "Second pass. ", "Third pass. "]) {
        yield* reply.sink.write(text)
        const ended = yield* Effect.forkChild(reply.sink.endPass("flush"))
        yield* TestClock.adjust("2 seconds")
        passes.push(yield* Fiber.join(ended))
      }
      assert.deepStrictEqual(passes, ["First pass. ", "Second pass. ", ""])
      assert.deepStrictEqual(yield* memory.texts, ["First pass. ", `Second pass. ${CUT_MARKER}`])
    }))

  it.effect("[issue 11] notices are capped at as many as DISCORD_MAX_MESSAGES_PER_TURN", () =>
    Effect.gen(function*() {
      const memory = yield* memoryTarget()
      const reply = yield* makeDiscordReplySink(memory.target, { maxMessages: 3 })
      for (let iteration = 1; iteration <= 6; iteration++) yield* reply.sink.notice(UserNotice.StillWorking({ iteration }))
      const drained = yield* Effect.forkChild(reply.drain)
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(drained)
      assert.strictEqual([...(yield* memory.contents).values()].filter((message) => message._tag === "Embed").length, 3)
    }))

  it("commitPoint shows whole words, and long runs without spaces", () => {
    assert.strictEqual(commitPoint("hello wor"), 6)
    assert.strictEqual(commitPoint("unfinished"), 0)
    assert.strictEqual(commitPoint("x".repeat(250)), 250)
    assert.strictEqual(commitPoint(`${"x".repeat(249)}\ud83d`), 249)
  })
})
