import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ChannelQueue, FOLDED_MESSAGES_KEPT, withFoldedMessages } from "../../src/chat/ChannelQueue"
import { STOP_RESPONSE_NOTE } from "../../src/chat/TurnInput"
import { TurnRunner } from "../../src/chat/TurnRunner"
import { ChatConfig } from "../../src/config/ChatConfig"
import type { ChatMessage } from "../../src/domain/ChatMessage"
import { toolSuccess } from "../../src/domain/ToolResult"
import type { TurnResult } from "../../src/domain/TurnResult"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { rawTool } from "../support/tools/testTools"
import { settlingTestClock } from "../support/settlingClock"
import { message, queueLayer } from "./harness"

const lastUser = (request: GenerationRequest) =>
  [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

const userTexts = (request: GenerationRequest | undefined) =>
  (request?.messages ?? []).filter((item) => item.role === "user").map((item) => item.content)

/** `tool …` runs a 30 s tool first (a follow-up never aborts a tool chain); anything else is answered at once. */
const script = ({ request }: { readonly request: GenerationRequest }) => {
  if (request.messages.some((item) => item.content === STOP_RESPONSE_NOTE)) return S.reply("Okay, I stopped.")
  const text = lastUser(request)
  if (text.startsWith("tool")) return request.functionHistory.length === 0 ? S.callTool("wait_a_bit") : S.reply(`tool done for ${text}`)
  return S.reply(`answer to ${text}`)
}

const waitABit = rawTool({
  name: "wait_a_bit",
  execute: () => Effect.as(Effect.sleep(Duration.seconds(30)), toolSuccess({ waited: true }))
})

const firstPasses = (requests: ReadonlyArray<GenerationRequest>) => requests.filter((request) => request.functionHistory.length === 0)

const submitAll = (texts: ReadonlyArray<string>, options: { readonly carryMessage?: boolean } = {}) =>
  Effect.flatMap(ChannelQueue, (queue) => Effect.forEach(texts, (text) => Effect.flatMap(message(text, options), (m) => queue.submit(m.input))))

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `m${from + i}`)

describe("ChannelQueue bound (CHANNEL_QUEUE_MAX, design decision 17)", () => {
  it.effect("a flood while a turn runs: at most CHANNEL_QUEUE_MAX turns wait, the rest fold into the newest, which answers the newest message", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const running = yield* queue.submit((yield* message("tool run")).input)
      yield* TestClock.adjust("1 second")
      const tickets = yield* submitAll(range(1, 12), { carryMessage: true })
      assert.deepStrictEqual(yield* queue.status("channel-1"), { active: true, queued: 3, followUps: 0 })
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual((yield* running.result).text, "tool done for tool run")
      const results = yield* Effect.forEach(tickets, (ticket) => ticket.result)
      assert.deepStrictEqual(results.map((result) => result.text), [
        "answer to m1",
        "answer to m2",
        ...range(3, 12).map(() => "answer to m12")
      ], "folded messages share the result of the turn that answered them")
      const folded = results.slice(2)
      assert.isTrue(folded.every((result) => result === folded[0]), "one turn, one result")
      const requests = yield* (yield* ScriptedProbe).requests
      assert.strictEqual(firstPasses(requests).length, 1 + 3, "1 running turn + CHANNEL_QUEUE_MAX model turns")
      // The folded turn answers the newest message with the earlier ones in its context.
      assert.deepStrictEqual(userTexts(requests.at(-1)), range(3, 12))
      assert.deepStrictEqual(yield* queue.busyChannels, [])
    }).pipe(Effect.provide(queueLayer({ script, tools: [waitABit], chat: { channelQueueMax: 3 } }))))

  it.effect("the default bound is 5; without TurnInput.message a folded turn's context is what its front loads", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      yield* queue.submit((yield* message("tool run")).input)
      yield* TestClock.adjust("1 second")
      const tickets = yield* submitAll(range(1, 30))
      assert.strictEqual((yield* queue.status("channel-1")).queued, 5)
      yield* TestClock.adjust("30 seconds")
      const last = yield* Effect.forEach(tickets, (ticket) => ticket.result)
      assert.strictEqual(last.at(-1)?.text, "answer to m30")
      const requests = yield* (yield* ScriptedProbe).requests
      assert.strictEqual(firstPasses(requests).length, 1 + 5)
      assert.deepStrictEqual(userTexts(requests.at(-1)), ["m30"])
    }).pipe(Effect.provide(queueLayer({ script, tools: [waitABit] }))))

  it.effect("a folded turn carries at most FOLDED_MESSAGES_KEPT earlier messages (the newest), whatever the flood", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      yield* queue.submit((yield* message("tool run")).input)
      yield* TestClock.adjust("1 second")
      const tickets = yield* submitAll(range(1, 40), { carryMessage: true })
      yield* TestClock.adjust("30 seconds")
      yield* Effect.forEach(tickets, (ticket) => ticket.result)
      const requests = yield* (yield* ScriptedProbe).requests
      assert.strictEqual(firstPasses(requests).length, 2)
      assert.deepStrictEqual(userTexts(requests.at(-1)), range(40 - FOLDED_MESSAGES_KEPT, 40))
    }).pipe(Effect.provide(queueLayer({ script, tools: [waitABit], chat: { channelQueueMax: 1 } }))))

  it.effect("/kill still cancels every waiting turn, folded messages included", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const running = yield* queue.submit((yield* message("tool long")).input)
      yield* TestClock.adjust("1 second")
      const tickets = yield* submitAll(range(1, 9))
      const outcome = yield* queue.kill("channel-1", { requesterId: "user-1" })
      assert.deepStrictEqual(outcome, { cancelled: 2, killed: true })
      assert.strictEqual((yield* running.result).status, "stopped_by_user")
      for (const ticket of tickets) {
        const exit = yield* Effect.exit(ticket.result)
        assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("TurnCancelledError"))
      }
      const next = yield* Effect.flatMap(queue.submit((yield* message("after the kill")).input), (ticket) => ticket.result)
      assert.strictEqual(next.text, "answer to after the kill")
      assert.strictEqual(firstPasses(yield* (yield* ScriptedProbe).requests).length, 2, "nothing cancelled reached the model")
    }).pipe(Effect.provide(queueLayer({ script, tools: [waitABit], chat: { channelQueueMax: 2 } }))))

  it.effect("CHANNEL_QUEUE_MAX from the environment: default 5, minimum 1", () =>
    Effect.gen(function*() {
      const fromEnv = (env: Record<string, string>) =>
        Effect.map(ChatConfig, (settings) => settings.channelQueueMax).pipe(
          Effect.provide(ChatConfig.layer),
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))
        )
      assert.strictEqual(yield* fromEnv({}), 5)
      assert.strictEqual(yield* fromEnv({ CHANNEL_QUEUE_MAX: "12" }), 12)
      assert.strictEqual(yield* fromEnv({ CHANNEL_QUEUE_MAX: "0" }), 1)
      assert.include(String(yield* Effect.flip(fromEnv({ CHANNEL_QUEUE_MAX: "many" }))), "CHANNEL_QUEUE_MAX")
    }))

  it("folded messages go right before the message answered, unless the context holds them already (same id or same message)", () => {
    const a: ChatMessage = { role: "user", content: "a", messageId: "1" }
    const b: ChatMessage = { role: "user", content: "b" }
    const c: ChatMessage = { role: "user", content: "c", messageId: "3" }
    const newest: ChatMessage = { role: "user", content: "d", messageId: "4" }
    const history: ChatMessage = { role: "assistant", content: "earlier reply" }
    assert.deepStrictEqual(withFoldedMessages([history, newest], [a, b, c]), [history, a, b, c, newest])
    assert.deepStrictEqual(
      withFoldedMessages([history, { role: "user", content: "a (as the front loaded it)", messageId: "1" }, b, newest], [a, b, c]),
      [history, { role: "user", content: "a (as the front loaded it)", messageId: "1" }, b, c, newest]
    )
    assert.deepStrictEqual(withFoldedMessages([newest], []), [newest])
  })
})

/** A runner whose turns take 10 s; the first one queues a stop response as a killed loop would. */
const stubRunner = (seen: Array<string>) =>
  TurnRunner.of({
    run: (input, options) =>
      Effect.gen(function*() {
        seen.push(input.messageId ?? "")
        if (input.messageId === "message-first") yield* options.stopResponses.queue({ requesterId: "user-1", originalMessageId: "kill-1" })
        yield* Effect.sleep("10 seconds")
        const result: TurnResult = { status: "completed", text: input.messageId ?? "", iterations: 1, attempts: [], toolCalls: [], usage: undefined, toolResponseDelivered: false }
        return result
      })
  })

describe("ChannelQueue bound and stop responses", () => {
  it.effect("a stop response waits at the front: never counted against the bound, never folded into", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const layer = Layer.merge(ChannelQueue.Default.pipe(Layer.provide(Layer.merge(Layer.succeed(TurnRunner, stubRunner(seen)), ChatConfig.make({ channelQueueMax: 2 })))), settlingTestClock)
      yield* Effect.gen(function*() {
        const queue = yield* ChannelQueue
        yield* queue.submit((yield* message("first")).input)
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* queue.status("channel-1"), { active: true, queued: 1, followUps: 0 }, "the stop response waits")
        const tickets = yield* submitAll(["x", "y", "z"])
        assert.deepStrictEqual(yield* queue.status("channel-1"), { active: true, queued: 3, followUps: 0 })
        yield* TestClock.adjust("40 seconds")
        const results = yield* Effect.forEach(tickets, (ticket) => ticket.result)
        assert.deepStrictEqual(results.map((result) => result.text), ["message-x", "message-z", "message-z"])
        assert.deepStrictEqual(seen, ["message-first", "kill-1", "message-x", "message-z"], "stop response first, then the two waiting turns")
      }).pipe(Effect.provide(layer))
    }))
})

describe("after /kill (issue 11.1, queue side)", () => {
  /** The stop response streams for 2 s: long enough for a new message to interrupt it, if it could. */
  const slowStop = ({ request }: { readonly request: GenerationRequest }) =>
    request.messages.some((item) => item.content === STOP_RESPONSE_NOTE)
      ? [S.text("Okay, "), S.sleep("2 seconds"), S.text("I stopped."), S.finish()]
      : script({ request })

  it.effect("the next message is answered as soon as the stop response ends: first in line, not interrupted, nothing stale before it", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const probe = yield* ScriptedProbe
      yield* queue.submit((yield* message("tool long")).input)
      yield* TestClock.adjust("1 second")
      yield* submitAll(["stale 1", "stale 2"])
      yield* queue.kill("channel-1", { requesterId: "user-1", stopContext: { requesterId: "user-1", originalMessageId: "kill-1" } })
      yield* probe.awaitCall(1) // the stop response streams
      const next = yield* queue.submit((yield* message("next")).input)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual((yield* next.result).text, "answer to next")
      const calls = yield* probe.calls
      // The tool-calling pass is read to its end too (a pass may make several calls).
      assert.deepStrictEqual(calls.map((call) => call.ending), ["completed", "completed", "completed"], "the stop response ran to its end")
      assert.deepStrictEqual(calls.map((call) => lastUser(call.request)), ["tool long", "tool long", "next"])
      assert.isTrue(calls[1]?.request.messages.some((item) => item.content === STOP_RESPONSE_NOTE))
    }).pipe(Effect.provide(queueLayer({ script: slowStop, tools: [waitABit] }))))
})

describe("/kill ends a turn stuck before its loop (issue 11.6)", () => {
  const stuck = (stage: "loadContext" | "openSink", how: Effect.Effect<never>) =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const m = yield* message("stuck")
      // Stuck the first time only: the stop response loads the same context again.
      let calls = 0
      const once = <A, R>(normal: Effect.Effect<A, never, R>) => Effect.suspend(() => (calls++ === 0 ? how : normal))
      const input = stage === "loadContext" ? { ...m.input, loadContext: once(m.input.loadContext) } : { ...m.input, openSink: once(m.input.openSink) }
      const ticket = yield* queue.submit(input)
      yield* TestClock.adjust("1 second")
      assert.isTrue((yield* queue.status("channel-1")).active)
      const fiber = yield* Effect.forkChild(ticket.result)
      yield* queue.kill("channel-1", { requesterId: "user-1", stopContext: { requesterId: "user-1", originalMessageId: "kill-1" } })
      // No clock advance: the kill alone ends it.
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual([result.status, result.iterations, result.text], ["stopped_by_user", 0, ""])
      const next = yield* Effect.flatMap(queue.submit((yield* message("hello again")).input), (t) => t.result)
      assert.strictEqual(next.text, "answer to hello again")
      const requests = yield* (yield* ScriptedProbe).requests
      const order = requests.map((request) => request.messages.some((item) => item.content === STOP_RESPONSE_NOTE) ? "stop-response" : lastUser(request))
      assert.deepStrictEqual(order, ["stop-response", "hello again"], "the stuck turn never reached the model; its stop response did")
      assert.deepStrictEqual(yield* queue.busyChannels, [])
    }).pipe(Effect.provide(queueLayer({ script })))

  it.effect("while loading the context (a history fetch that never returns)", () => stuck("loadContext", Effect.never))
  it.effect("while loading the context, even when that stage ignores interruption", () => stuck("loadContext", Effect.uninterruptible(Effect.never)))
  it.effect("while opening the reply", () => stuck("openSink", Effect.never))

  it.effect("a kill without a stop context ends the stuck turn with no stop response", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const m = yield* message("stuck")
      const ticket = yield* queue.submit({ ...m.input, loadContext: Effect.never })
      yield* TestClock.adjust("1 second")
      yield* queue.kill("channel-1", { requesterId: "user-1" })
      assert.strictEqual((yield* ticket.result).status, "stopped_by_user")
      assert.deepStrictEqual(yield* queue.busyChannels, [])
      assert.strictEqual((yield* (yield* ScriptedProbe).requests).length, 0)
    }).pipe(Effect.provide(queueLayer({ script }))))
})
