import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { byModel, callTool, reply, type ScriptedPass, sleep } from "../../src/provider/scripted/Script"
import { makeRecordingTool } from "../support/tools/testTools"
import type { FakeDiscord } from "../support/fakeDiscord"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Response Drafting on the real Discord path (issue 14 "Done when"): a real discord.js client
 * against the fake Discord, the ChannelQueue and generation turn over a scripted author
 * (`model-a`) and a scripted reviewer of its own. The reviewer takes a moment (real time), so
 * the test looks at Discord while it decides.
 */

const REVIEWER = "reviewer"
const verdict = (value: "approve" | "revise", feedback?: string): ScriptedPass =>
  reply(JSON.stringify(feedback === undefined ? { verdict: value } : { verdict: value, feedback }))
const slowly = (pass: ScriptedPass): ScriptedPass => [sleep("300 millis"), ...pass]

/** Every message-creating request the bot sent (a post deleted later still counts). */
const posts = (fake: FakeDiscord) => fake.requests.filter((request) => request.method === "POST" && /\/messages$|\/webhooks\//.test(request.path))

describe("Response Drafting through Discord (real discord.js, fake Discord, scripted author and reviewer)", () => {
  it.scopedLive("nothing is posted before approval, and a revision keeps the tool result: the tool ran once, its result is in the revised pass's history", () =>
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

  it.scopedLive("drafting off (the default): the same reply streams into Discord before the turn ends", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: byModel({ "model-a": [reply("Streamed at once.")] }) })
      fake.userSays(fake.channel, "hi", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the streamed reply", ([content]) => content === "Streamed at once.")
      assert.isFalse((yield* probe.requests).some((request) => request.model === REVIEWER))
    }))
})
