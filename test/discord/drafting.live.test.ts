import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { TurnObserver, type TurnObserverShape } from "../../src/chat/TurnObserver"
import type { TurnStatus } from "../../src/domain/PassResult"
import { toolSuccess } from "../../src/domain/ToolResult"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { byModel, callTool, reply, type ScriptedPass, sleep } from "../../src/provider/scripted/Script"
import { makeRecordingTool } from "../support/tools/testTools"
import { type FakeDiscord, waitUntil } from "../support/fakeDiscord"
import { fakeLlmServer, type FakeResponse, type RecordedRequest } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Response Drafting on the real Discord path: a real discord.js client against the fake
 * Discord, the ChannelQueue and generation turn over an author (`model-a`) and a reviewer of
 * its own, scripted, or over the OpenAI-compatible provider and a loopback server. The reviewer
 * takes a moment (real time), so the test looks at Discord while it decides.
 */

const REVIEWER = "reviewer"
const verdict = (value: "approve" | "revise", feedback?: string): ScriptedPass =>
  reply(JSON.stringify(feedback === undefined ? { verdict: value } : { verdict: value, feedback }))
const slowly = (pass: ScriptedPass): ScriptedPass => [sleep("300 millis"), ...pass]

/** Every message-creating request the bot sent (a post deleted later still counts). */
const posts = (fake: FakeDiscord) => fake.requests.filter((request) => request.method === "POST" && /\/messages$|\/webhooks\//.test(request.path))

/** How long the reviewer of the first draft holds its approval (a reviewer that takes its time). */
const HOLD_MS = 2_500

/**
 * The bot over the real OpenAI-compatible provider and a loopback server that plays author and
 * reviewer by model name: the first review holds its approval for HOLD_MS, every other call
 * answers at once. The author drafts "The old draft." for the first question, "The new answer."
 * for the second, "Stopped, as you asked." for a stop response (its turn is told of the /kill).
 * Every turn's status is recorded as the operations observer sees it.
 */
const heldReviewBot = () =>
  Effect.gen(function*() {
    const answer = (text: string): FakeResponse => openAiStream([textChunk(text), finishChunk("stop")])
    const approval = answer(JSON.stringify({ verdict: "approve" }))
    let reviews = 0
    const server = yield* fakeLlmServer({
      handler: (request: RecordedRequest) => {
        const body = request.json as { readonly model?: string; readonly messages?: ReadonlyArray<unknown> }
        if (body.model === REVIEWER) {
          reviews += 1
          return reviews === 1 ? { ...approval, parts: [{ delayMs: HOLD_MS }, ...approval.parts] } : approval
        }
        if (JSON.stringify(body.messages ?? []).includes("/kill")) return answer("Stopped, as you asked.")
        return answer(JSON.stringify(body.messages?.at(-1) ?? "").includes("second question") ? "The new answer." : "The old draft.")
      }
    })
    const statuses: Array<TurnStatus> = []
    const observer: TurnObserverShape = {
      observe: (_input, turn) => Effect.tap(turn, (result) => Effect.sync(() => statuses.push(result.status)))
    }
    const { fake } = yield* botHarness({
      script: () => reply("unused"),
      model: OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }).pipe(Layer.provide(providerHttpClient())),
      drafting: { reviewModel: REVIEWER }
    }).pipe(Effect.provideService(TurnObserver, observer))
    fake.userSays(fake.channel, "first question", { mentionBot: true })
    const review = yield* Effect.promise(() => server.request(1))
    assert.strictEqual(modelOf(review), REVIEWER, "the second model call reviews the first draft")
    const heldUntil = Date.now() + HOLD_MS
    /** Whether the reviewer's socket closed before it could answer (an answered request may close later, when idle). */
    const closedUnanswered = Effect.promise(() => review.closed.then(() => Date.now() < heldUntil))
    return { server, fake, statuses, closedUnanswered, heldUntil }
  })

const modelOf = (request: RecordedRequest) => (request.json as { readonly model?: string }).model

/** Sleeps until past the moment the held reviewer would have answered. */
const pastTheHold = (heldUntil: number) => Effect.sleep(`${Math.max(0, heldUntil + 300 - Date.now())} millis`)

describe("Response Drafting through Discord (real discord.js, fake Discord, scripted author and reviewer)", () => {
  it.live("nothing is posted before approval, and a revision keeps the tool result: the tool ran once, its result is in the revised pass's history", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ answer: 42 })))
      const { fake, probe } = yield* botHarness({
        tools: [lookup.tool],
        drafting: { reviewModel: REVIEWER },
        script: byModel({
          "model-a": [callTool("lookup", { q: "the answer" }, "Let me look it up. "), reply("It is about 40."), reply("It is 42.")],
          [REVIEWER]: [verdict("approve"), slowly(verdict("revise", "The tool said 42, not about 40.")), slowly(verdict("approve"))]
        })
      })
      fake.userSays(fake.channel, "what is the answer?", { mentionBot: true })

      // Calls: 0 author (tool call), 1 tool review, 2 author (draft), 3 response review (revise),
      // 4 author (revised draft), 5 response review (approve).
      yield* probe.awaitCall(3)
      assert.deepStrictEqual(posts(fake), [], "the narration and the first draft are held while the reviewer decides")
      yield* probe.awaitCall(5)
      assert.deepStrictEqual(posts(fake), [], "the revised draft is held until it is approved")

      yield* awaitBotMessages(fake, fake.channel.id, 1, "the approved reply", ([content]) => content === "It is 42.")
      yield* Effect.sleep("300 millis")
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["It is 42."])
      assert.strictEqual(posts(fake).length, 1, "one post: the revised reply; the rejected draft never reached Discord")

      assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1, "the tool ran once")
      const requests = yield* probe.requests
      const revised = requests[4]
      assert.strictEqual(revised?.model, "model-a")
      assert.deepStrictEqual(revised?.functionHistory.map((entry) => entry.functionResponse.response.result), [{ answer: 42 }])
      assert.isTrue(revised?.messages.some((message) => message.content.includes("The tool said 42, not about 40.")), "the revised pass got the feedback")
      assert.strictEqual(requests[5]?.model, REVIEWER)
    }))

  it.live("drafting off (the default): the same reply streams into Discord before the turn ends", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: byModel({ "model-a": [reply("Streamed at once.")] }) })
      fake.userSays(fake.channel, "hi", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the streamed reply", ([content]) => content === "Streamed at once.")
      assert.isFalse((yield* probe.requests).some((request) => request.model === REVIEWER))
    }))

  it.live("a follow-up while the reviewer decides discards the held draft (follow_up_interrupt, the reviewer's request closed, nothing posted); the follow-up is answered next", () =>
    Effect.gen(function*() {
      const { closedUnanswered, fake, heldUntil, server, statuses } = yield* heldReviewBot()
      const second = fake.userSays(fake.channel, "second question", { mentionBot: true })

      yield* awaitBotMessages(fake, fake.channel.id, 1, "the follow-up's answer", (contents) => contents.includes("The new answer."))
      yield* waitUntil(fake, "both turns ended", () => statuses.length === 2)
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["The new answer."], "the held draft was never posted")
      assert.deepStrictEqual(statuses, ["follow_up_interrupt", "completed"])
      assert.isTrue(yield* closedUnanswered, "the held review's request was closed when the follow-up arrived")

      // Past the moment the held reviewer would have approved: the old draft never reached Discord.
      yield* pastTheHold(heldUntil)
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => [message.content, message.replyTo]), [["The new answer.", second.id]])
      assert.strictEqual(posts(fake).length, 1, "one post: the follow-up's answer")
      assert.notInclude(JSON.stringify(fake.requests.map((request) => request.body ?? {})), "The old draft.")
      assert.deepStrictEqual(server.requests.map(modelOf), ["model-a", REVIEWER, "model-a", REVIEWER])
    }), 30_000)

  it.live("/kill while the reviewer decides discards the held draft (stopped_by_user, the reviewer's request closed, nothing of it posted); the stop response follows", () =>
    Effect.gen(function*() {
      const { closedUnanswered, fake, heldUntil, server, statuses } = yield* heldReviewBot()
      const kill = fake.slash("kill")
      yield* waitUntil(fake, "kill answered", () => kill.original?.content.startsWith("⏹") === true)
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the stop response", (contents) => contents.includes("Stopped, as you asked."))
      yield* waitUntil(fake, "both turns ended", () => statuses.length === 2)
      assert.deepStrictEqual(statuses, ["stopped_by_user", "completed"])
      assert.isTrue(yield* closedUnanswered, "the held review's request was closed by the /kill")

      yield* pastTheHold(heldUntil)
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((message) => message.content), ["Stopped, as you asked."], "only the stop response was posted")
      assert.notInclude(JSON.stringify(fake.requests.map((request) => request.body ?? {})), "The old draft.")
      assert.deepStrictEqual(server.requests.map(modelOf), ["model-a", REVIEWER, "model-a"], "the stop response is one pass, not reviewed")
    }), 30_000)
})
