import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { callTool, finish, type ScriptedPass, sleep, text } from "../../src/provider/scripted/Script"
import { makeTool } from "../../src/tools/Tool"
import { channelPayload, waitUntil } from "../support/fakeDiscord"
import { botHarness } from "./botHarness"

const CHANNELS = 100
const SENTENCES = 20

const sentence = (reply: string, n: number) => `Reply ${reply} sentence ${n} is here.`
const answer = (reply: string) => Array.from({ length: SENTENCES }, (_, i) => sentence(reply, i + 1)).join(" ")

/** Streams the answer of reply `id`, a sentence every 60 ms (≈1.2 s in all). */
const streamed = (id: string): ScriptedPass => [
  ...Array.from({ length: SENTENCES }, (_, i) => [text(`${i === 0 ? "" : " "}${sentence(id, i + 1)}`), sleep("60 millis")]).flat(),
  finish("stop")
]

const lookUp = makeTool({
  name: "look_up",
  description: "Looks something up.",
  category: "utility",
  parameters: Schema.Struct({}),
  execute: () => Effect.succeed(toolSuccess({ found: 42 }))
})

describe("a busy shard under Discord's global limit (real discord.js, fake Discord enforcing both limits)", () => {
  it.live("[issue 27] 100 channels mention the bot at once: every reply arrives whole, no global 429, at most 45 requests in any second", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({
        tools: [lookUp],
        fake: { globalLimit: { perSecond: 50 }, messageBucket: { limit: 5, windowMs: 5000 } },
        // Edits as often as the sink allows: the budget alone must keep the bot under the limit.
        front: { minEditInterval: "100 millis", typingRefresh: "8 seconds" },
        // One tool call per turn, then the streamed answer naming the channel's reply.
        script: ({ request }) => {
          const id = /go (\d+)/.exec(request.messages.at(-1)?.content ?? "")?.[1] ?? "?"
          return request.functionHistory.length === 0 ? callTool("look_up", {}) : streamed(id)
        }
      })
      const channels = Array.from({ length: CHANNELS }, (_, index) => {
        const channel = fake.addChannel({ kind: "text", name: `busy-${index}` })
        fake.dispatch("CHANNEL_CREATE", { ...channelPayload(channel), position: index + 1 }, fake.guild.id)
        return channel
      })
      yield* Effect.sleep("100 millis")
      const since = Date.now()
      channels.forEach((channel, index) => fake.userSays(channel, `go ${index}`, { mentionBot: true }))
      const whole = () => channels.every((channel, index) => fake.botMessages(channel.id).map((message) => message.content).join(" ") === answer(String(index)))
      yield* waitUntil(fake, "every reply whole", whole, 20_000)
      console.log(`busy shard: ${CHANNELS} replies whole in ${Date.now() - since} ms, ${fake.requests.filter((r) => r.at >= since).length} requests, peak ${fake.peakRequestsPerWindow(1000, since)}/s`)
      assert.strictEqual(fake.rateLimited.global, 0, "global 429s")
      assert.isAtMost(fake.peakRequestsPerWindow(1000, since), 45)
      // The channels were created empty in front of the client: no turn asks Discord for history.
      assert.strictEqual(fake.requestsTo("GET", /^\/channels\/\d+\/messages$/).length, 0)
    }), { timeout: 30_000 })
})
