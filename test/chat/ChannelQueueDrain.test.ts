import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { message, queueLayer } from "./harness"

const lastUser = (request: GenerationRequest) =>
  [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

/** `slow …` streams for 10 s (two halves), anything else answers at once. */
const script = ({ request }: { readonly request: GenerationRequest }) =>
  lastUser(request).startsWith("slow")
    ? [S.text("first half"), S.sleep("10 seconds"), S.text(", second half"), S.finish()]
    : S.reply(`answer to ${lastUser(request)}`)

const layer = queueLayer({ script })

describe("ChannelQueue.drain (graceful shutdown)", () => {
  it.effect("running turns finish within the grace period; a message after the drain began is neither taken nor interrupts", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const inA = yield* message("slow a", { channelId: "A" })
      const inB = yield* message("slow b", { channelId: "B" })
      const a = yield* queue.submit(inA.input)
      const b = yield* queue.submit(inB.input)
      yield* TestClock.adjust("1 second")
      const drain = yield* Effect.forkChild(queue.drain(Duration.seconds(15)))
      yield* TestClock.adjust("100 millis")
      const late = yield* message("too late", { channelId: "A" })
      const refused = yield* Effect.exit(Effect.flatMap(queue.submit(late.input), (ticket) => ticket.result))
      assert.isTrue(Exit.isFailure(refused) && String(refused.cause).includes("shutting down"), String(refused))
      yield* TestClock.adjust("15 seconds")
      assert.deepStrictEqual(yield* Fiber.join(drain), { stoppedChannels: 0 })
      const results = [yield* a.result, yield* b.result]
      assert.deepStrictEqual(results.map((result) => result.status), ["completed", "completed"])
      assert.strictEqual(yield* inA.collected.delivered, "first half, second half", "the late message did not interrupt the reply")
      assert.deepStrictEqual(yield* queue.busyChannels, [])
    }).pipe(Effect.provide(layer)))

  it.effect("past the grace period, waiting turns are cancelled and the running one is stopped (stopped_by_user, no stop response)", () =>
    Effect.gen(function*() {
      const queue = yield* ChannelQueue
      const slow = yield* message("slow one")
      const running = yield* queue.submit(slow.input)
      yield* TestClock.adjust("1 second")
      const drain = yield* Effect.forkChild(queue.drain(Duration.seconds(3)))
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(yield* Fiber.join(drain), { stoppedChannels: 1 })
      const result = yield* running.result
      assert.strictEqual(result.status, "stopped_by_user")
      assert.strictEqual(yield* slow.collected.delivered, "first half", "the text shown so far stays")
      assert.deepStrictEqual(yield* queue.busyChannels, [], "no stop response was queued")
    }).pipe(Effect.provide(layer)))
})
