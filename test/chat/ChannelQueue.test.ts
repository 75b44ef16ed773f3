import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ChannelQueue, MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS } from "../../src/chat/ChannelQueue"
import { STOP_RESPONSE_NOTE } from "../../src/chat/TurnInput"
import { TurnRunner } from "../../src/chat/TurnRunner"
import { toolSuccess } from "../../src/domain/ToolResult"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { ToolAffordances } from "../../src/tools/ToolAffordances"
import { rawTool } from "../support/tools/testTools"
import { settlingTestClock } from "../support/settlingClock"
import { message, queueLayer } from "./harness"

const lastUser = (request: GenerationRequest) =>
  [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

/** Answers each message by its text: `slow …` streams for a while, anything else replies at once. */
const script = ({ request }: { readonly request: GenerationRequest }) => {
  const text = lastUser(request)
  const stopped = request.messages.some((item) => item.content === STOP_RESPONSE_NOTE)
  if (stopped) return S.reply("Okay, I stopped.")
  if (text.startsWith("slow")) return [S.text(`working on ${text}…`), S.sleep("60 seconds"), S.text(" done"), S.finish()]
  if (text.startsWith("tool")) return request.functionHistory.length === 0 ? S.callTool("wait_a_bit") : S.reply(`tool done for ${text}`)
  return S.reply(`answer to ${text}`)
}

const waitABit = rawTool({
  name: "wait_a_bit",
  execute: () => Effect.as(Effect.sleep(Duration.seconds(30)), toolSuccess({ waited: true }))
})

const layer = queueLayer({ script, tools: [waitABit] })

describe("ChannelQueue", () => {
  it.effect("[2.8] one turn at a time per channel; a new message interrupts the streaming reply and is answered next", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const first = yield* message("slow one")
      const second = yield* message("second")
      const t1 = yield* queue.submit(first.input)
      yield* TestClock.adjust("1 second")
      const t2 = yield* queue.submit(second.input)
      const r1 = yield* t1.result
      const r2 = yield* t2.result
      assert.strictEqual(r1.status, "follow_up_interrupt")
      assert.strictEqual(yield* first.collected.delivered, "working on slow one…", "what was shown stays; the rest never comes")
      assert.deepStrictEqual([r2.status, r2.text], ["completed", "answer to second"])
      const probe = yield* ScriptedProbe
      const calls = yield* probe.calls
      assert.deepStrictEqual(calls.map((call) => call.ending), ["interrupted", "completed"])
    }).pipe(Effect.provide(layer)))

  it.effect("[2.8] channels are independent: a turn in another channel neither waits nor interrupts", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const a = yield* message("slow a", { channelId: "A" })
      const b = yield* message("b", { channelId: "B" })
      const ta = yield* queue.submit(a.input)
      yield* TestClock.adjust("1 second")
      const rb = yield* Effect.flatMap(queue.submit(b.input), (ticket) => ticket.result)
      assert.strictEqual(rb.status, "completed")
      assert.deepStrictEqual(yield* queue.status("A"), { active: true, queued: 0, followUps: 0 })
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* ta.result).status, "completed")
    }).pipe(Effect.provide(layer)))

  it.effect("[16] a message during a tool chain does not abort the chain; it is answered next", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const first = yield* message("tool run")
      const second = yield* message("after")
      const t1 = yield* queue.submit(first.input)
      yield* TestClock.adjust("5 seconds")
      const t2 = yield* queue.submit(second.input)
      yield* TestClock.adjust("30 seconds")
      const r1 = yield* t1.result
      assert.deepStrictEqual([r1.status, r1.text], ["completed", "tool done for tool run"])
      assert.strictEqual(r1.toolCalls[0]?.success, true)
      assert.strictEqual((yield* t2.result).text, "answer to after")
    }).pipe(Effect.provide(layer)))

  it.effect("[2.8] each turn gets fresh signals: a stop in one turn never reaches the next", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const first = yield* message("slow x")
      const t1 = yield* queue.submit(first.input)
      yield* TestClock.adjust("1 second")
      yield* queue.kill("channel-1", { requesterId: "user-1" })
      assert.strictEqual((yield* t1.result).status, "stopped_by_user")
      const next = yield* message("hello again")
      const r2 = yield* Effect.flatMap(queue.submit(next.input), (ticket) => ticket.result)
      assert.deepStrictEqual([r2.status, r2.text], ["completed", "answer to hello again"])
    }).pipe(Effect.provide(layer)))

  it.effect("[kill] /kill cancels the queued turns first, then kills the active one (its tool interrupted)", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const t1 = yield* queue.submit((yield* message("tool long")).input)
      yield* TestClock.adjust("1 second")
      const queued = yield* Effect.forEach(["q1", "q2"], (text) => Effect.flatMap(message(text), (m) => queue.submit(m.input)))
      assert.deepStrictEqual(yield* queue.status("channel-1"), { active: true, queued: 2, followUps: 0 })
      const outcome = yield* queue.kill("channel-1", { requesterId: "user-1" })
      assert.deepStrictEqual(outcome, { cancelled: 2, killed: true })
      const r1 = yield* t1.result
      assert.deepStrictEqual([r1.status, r1.toolCalls.length], ["stopped_by_user", 0])
      for (const ticket of queued) {
        const exit = yield* Effect.exit(ticket.result)
        assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("TurnCancelledError"))
      }
      assert.deepStrictEqual(yield* queue.busyChannels, [])
      assert.strictEqual((yield* (yield* ScriptedProbe).calls).length, 1, "the cancelled turns never reached the model")
    }).pipe(Effect.provide(layer)))

  it.effect("[kill] /kill while a turn streams with nothing queued: stopped at once, the provider request aborted", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const m = yield* message("slow k")
      const t1 = yield* queue.submit(m.input)
      yield* TestClock.adjust("1 second")
      const outcome = yield* queue.kill("channel-1", { requesterId: "user-1" })
      assert.deepStrictEqual(outcome, { cancelled: 0, killed: true })
      const r1 = yield* t1.result
      assert.deepStrictEqual([r1.status, r1.text], ["stopped_by_user", "working on slow k…"])
      assert.strictEqual(yield* (yield* ScriptedProbe).awaitFinalized(0), "interrupted")
    }).pipe(Effect.provide(layer)))

  it.effect("[52][2.8] a stop with context queues its stop response at the front, before messages queued meanwhile", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const t1 = yield* queue.submit((yield* message("slow s")).input)
      yield* TestClock.adjust("1 second")
      yield* queue.kill("channel-1", { requesterId: "user-1", stopContext: { requesterId: "user-1", originalMessageId: "kill-1" } })
      const later = yield* message("later")
      const t3 = yield* queue.submit(later.input)
      assert.strictEqual((yield* t1.result).status, "stopped_by_user")
      assert.strictEqual((yield* t3.result).text, "answer to later")
      const requests = yield* (yield* ScriptedProbe).requests
      const order = requests.map((request) =>
        request.messages.some((item) => item.content === STOP_RESPONSE_NOTE) ? "stop-response" : lastUser(request))
      assert.deepStrictEqual(order, ["slow s", "stop-response", "later"])
    }).pipe(Effect.provide(layer)))

  it.effect("[53] the follow-up count grows with each interrupt and a finished reply resets it", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const t1 = yield* queue.submit((yield* message("slow 1")).input)
      yield* TestClock.adjust("1 second")
      const t2 = yield* queue.submit((yield* message("slow 2")).input)
      assert.strictEqual((yield* t1.result).status, "follow_up_interrupt")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* queue.status("channel-1"), { active: true, queued: 0, followUps: 1 })
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* t2.result).status, "completed")
      assert.deepStrictEqual(yield* queue.status("channel-1"), { active: false, queued: 0, followUps: 0 })
    }).pipe(Effect.provide(layer)))

  it.effect("[53] after the maximum consecutive interrupts a new message queues without interrupting", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const tickets = [yield* queue.submit((yield* message("slow 0")).input)]
      for (let i = 1; i <= MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS + 1; i++) {
        yield* TestClock.adjust("1 second")
        tickets.push(yield* queue.submit((yield* message(`slow ${i}`)).input))
        if (i <= MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS) {
          assert.strictEqual((yield* (tickets[i - 1]?.result ?? Effect.die("missing"))).status, "follow_up_interrupt")
        }
      }
      yield* TestClock.adjust("200 seconds")
      const last = yield* Effect.forEach(tickets.slice(-2), (ticket) => ticket.result)
      assert.deepStrictEqual(last.map((result) => result.status), ["completed", "completed"], "the turn running at the cap finished")
    }).pipe(Effect.provide(layer)))

  it.effect("[sweep] the queue forgets idle channels (no leak across many channels)", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const tickets = yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => `c${i}`), (channelId) =>
        Effect.flatMap(message("hi", { channelId }), (m) => queue.submit(m.input)))
      yield* Effect.forEach(tickets, (ticket) => ticket.result, { discard: true })
      assert.deepStrictEqual(yield* queue.busyChannels, [])
    }).pipe(Effect.provide(layer)))
})

describe("ChannelQueue with a stub runner", () => {
  it.effect("[64] a turn that waited behind another is marked isFromQueue (the front decides the reply reference)", () =>
    Effect.gen(function*() {
      const seen: Array<boolean> = []
      const runner = TurnRunner.of({
        run: (input, options) =>
          Effect.gen(function*() {
            seen.push(options.isFromQueue)
            yield* Effect.sleep("10 seconds")
            return { status: "completed", text: input.messageId ?? "", iterations: 1, attempts: [], toolCalls: [], usage: undefined, toolResponseDelivered: false } as const
          })
      })
      yield* Effect.gen(function*() {
        const queue = yield* ChannelQueue
        const first = yield* queue.submit((yield* message("a")).input)
        const second = yield* queue.submit((yield* message("b")).input)
        yield* TestClock.adjust("20 seconds")
        yield* first.result
        yield* second.result
        assert.deepStrictEqual(seen, [false, true])
      }).pipe(Effect.provide(Layer.merge(ChannelQueue.Default.pipe(Layer.provide(Layer.succeed(TurnRunner, runner))), settlingTestClock)))
    }))

  it.effect("[deliberate] every finished turn of a channel shrinks its tool retention windows", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const affordances = yield* ToolAffordances
      yield* affordances.retain("channel-1", "wait_a_bit", 1)
      const first = yield* message("one")
      yield* (yield* queue.submit(first.input)).result
      assert.deepStrictEqual(yield* affordances.retained("channel-1"), ["wait_a_bit"])
      assert.deepStrictEqual(yield* affordances.retained("channel-2"), [])
      const second = yield* message("two")
      yield* (yield* queue.submit(second.input)).result
      assert.deepStrictEqual(yield* affordances.retained("channel-1"), [], "the window closed after its turns")
    }).pipe(Effect.provide(layer)))
})
