import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { callTool, reply } from "../../src/provider/scripted/Script"
import { StoreTimeout } from "../../src/store/StoreTimeout"
import { makeTool } from "../../src/tools/Tool"
import { waitUntil } from "../support/fakeDiscord"
import { hangingHttpServer } from "../support/hangingHttpServer"
import { type LogCapture, makeLogCapture } from "../support/tools/logCapture"
import { storesOnHangingDatabase } from "../store/hangingDatabase"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Issue 11 done-when, end to end: the whole bot on a real discord.js client against the fake
 * Discord, a scripted model whose requests are inspected.
 */

const lastContent = (request: GenerationRequest | undefined) => request?.messages.at(-1)?.content ?? ""

/** A first pass of a turn (later passes replay the turn's tool history). */
const isFirstPass = (request: GenerationRequest) => request.functionHistory.length === 0

/** Resolves when `count` log lines contain `fragment` (the queue logs every fold). */
const awaitLogLines = (logs: LogCapture, fragment: string, count: number) =>
  Effect.flatMap(logs.matching(fragment), (lines) => (lines.length >= count ? Effect.void : Effect.fail(lines.length))).pipe(
    Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 500 }),
    Effect.mapError((seen) => new Error(`${seen} of ${count} lines "${fragment}" logged`))
  )

/** A loopback server that never answers, counting the requests it got and the connections closed. */
const countingHangingServer = Effect.gen(function*() {
  const server = yield* hangingHttpServer
  const counts = { requests: 0, closed: 0 }
  server.server.on("request", () => {
    counts.requests += 1
  })
  server.server.on("connection", (socket) => {
    socket.on("close", () => {
      counts.closed += 1
    })
  })
  return { url: server.url, arrived: server.arrived, counts }
})

describe("turn integrity end to end (issue 11; real discord.js, fake Discord, scripted model)", () => {
  it.live("/kill during a hanging tool: its socket closes within 2 s, the stop response declares no tools, the next message is answered", () =>
    Effect.gen(function*() {
      const server = yield* countingHangingServer
      const fetching = makeTool({
        name: "slow_fetch",
        description: "Fetches a slow page.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () =>
          Effect.tryPromise({ try: (signal) => fetch(server.url, { signal }), catch: () => new Error("fetch failed") }).pipe(
            Effect.as(toolSuccess("page")),
            Effect.orElseSucceed(() => toolSuccess("failed"))
          )
      })
      const { fake, probe } = yield* botHarness({
        tools: [fetching],
        // The model of the issue: offered the tool again in the stop response, it calls it again.
        script: ({ index, request }) => {
          if (index === 0) return callTool("slow_fetch", {}, "Fetching that page now. ")
          if (lastContent(request) === "next question") return reply("Fresh answer.")
          return request.tools.some((tool) => tool.name === "slow_fetch") ? callTool("slow_fetch", {}) : reply("Okay, I stopped.")
        }
      })
      fake.userSays(fake.channel, "fetch it", { mentionBot: true })
      yield* Deferred.await(server.arrived)
      const killedAt = Date.now()
      const kill = fake.slash("kill")
      yield* waitUntil(fake, "the tool's socket closed", () => server.counts.closed >= 1, 2_000)
      assert.isAtMost(Date.now() - killedAt, 2_000)
      yield* waitUntil(fake, "kill acknowledged", () => kill.original?.content.startsWith("⏹") === true)
      yield* probe.awaitCall(1)
      const stopResponse = (yield* probe.requests)[1]
      assert.isTrue(stopResponse?.messages.some((m) => m.content.includes("/kill")) === true, "the second request is the stop response")
      // NEEDS THE LOOP ENGINEER'S PART OF ISSUE 11 (the stop response declares no tools, one pass).
      // Until it is merged this fails here: the stop response offers slow_fetch, the model calls
      // it again, and the next message waits behind the re-run (the bug the issue reports).
      assert.deepStrictEqual(stopResponse?.tools.map((tool) => tool.name), [], "the stop response offers no tools")
      yield* awaitBotMessages(fake, fake.channel.id, 2, "partial reply and stop response", (contents) => contents.includes("Okay, I stopped."))
      assert.strictEqual(fake.botMessages(fake.channel.id)[0]?.content, `Fetching that page now. ${STOPPED_MARKER}`)

      fake.userSays(fake.channel, "next question", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "the next answer", (contents) => contents.includes("Fresh answer."))
      assert.strictEqual(server.counts.requests, 1, "the killed work never ran again")
      const requests = yield* probe.requests
      assert.strictEqual(lastContent(requests.at(-1)), "next question")
    }))

  it.live("30 messages during a running reply cost at most 1 + CHANNEL_QUEUE_MAX model turns, and the newest message is answered", () =>
    Effect.gen(function*() {
      const CHANNEL_QUEUE_MAX = 5
      const FLOOD = 30
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holding = makeTool({
        name: "look_up",
        description: "Looks something up.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () => Effect.andThen(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)), Effect.succeed(toolSuccess({ found: 42 })))
      })
      const logs = yield* makeLogCapture
      const { fake, probe } = yield* logs.capture(botHarness({
        tools: [holding],
        script: ({ index, request }) =>
          index === 0 ? callTool("look_up", {}, "Let me look. ") : index === 1 ? reply("It is 42.") : reply(`Answer to ${lastContent(request)}.`)
      }))
      fake.userSays(fake.channel, "what is it?", { mentionBot: true })
      yield* Deferred.await(started)
      const flood = Array.from({ length: FLOOD }, (_, i) => fake.userSays(fake.channel, `m${i + 1}`, { mentionBot: true }))
      const newest = flood[FLOOD - 1]
      // Every message reached the queue: the ones beyond the bound were folded (and logged).
      yield* awaitLogLines(logs, "message folded into the newest waiting turn", FLOOD - CHANNEL_QUEUE_MAX)
      yield* Deferred.succeed(release, undefined)
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the newest message answered", () =>
        fake.botMessages(fake.channel.id).some((message) => message.replyTo === newest?.id && message.content === `Answer to m${FLOOD}.`), 15_000)
      const requests = yield* probe.requests
      assert.strictEqual(requests.filter(isFirstPass).length, 1 + CHANNEL_QUEUE_MAX, "model turns")
      assert.strictEqual(requests.length, 2 + CHANNEL_QUEUE_MAX, "the running turn's two passes, one per waiting turn")
      assert.strictEqual(lastContent(requests.at(-1)), `m${FLOOD}`, "the folded turn answers the newest message")
      // Earlier flood messages are in its context (the channel history the front loads).
      assert.isTrue(requests.at(-1)?.messages.some((m) => m.content === `m${FLOOD - 1}`) === true)
      const answer = fake.botMessages(fake.channel.id).find((message) => message.replyTo === newest?.id)
      assert.strictEqual(answer?.content, `Answer to m${FLOOD}.`)
      assert.strictEqual(fake.botMessages(fake.channel.id).filter((message) => message.content.startsWith("Answer to")).length, CHANNEL_QUEUE_MAX)
    }), 60_000)

  it.live("a database that never answers: each store call fails at STORE_TIMEOUT_MS with a log line; the channel answers, and answers the next message", () =>
    Effect.gen(function*() {
      const { layer: hanging, database } = yield* storesOnHangingDatabase
      const logs = yield* makeLogCapture
      const { fake } = yield* logs.capture(botHarness({
        script: ({ request }) => reply(`Answer to ${lastContent(request)}.`),
        stores: hanging.pipe(Layer.provide(Layer.succeed(StoreTimeout, Duration.millis(300))))
      }))
      fake.userSays(fake.channel, "are you there?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer despite the database", ([content]) => content === "Answer to are you there?.", 10_000)
      fake.userSays(fake.channel, "and now?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the next answer", (contents) => contents[1] === "Answer to and now?.", 10_000)
      assert.isAtLeast(yield* database.started, 2)
      const timedOut = (yield* logs.matching("the database did not answer within 300 ms (STORE_TIMEOUT_MS)")).filter((line) => line.level === "ERROR")
      // The mute check of the trigger and the blocked-user check of the context, for each message.
      assert.includeMembers(timedOut.map((line) => line.message.split(":")[0]), ["PersonaBlockStore.activeBlock", "PersonaBlockStore.activeBlocks"])
      assert.isAtLeast(timedOut.length, 4)
    }), 30_000)
})
