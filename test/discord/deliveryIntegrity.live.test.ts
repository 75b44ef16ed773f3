import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect } from "effect"
import { CUT_MARKER } from "../../src/discord/replyLayout"
import { finish, reply, type ScriptStep, sleep, text } from "../../src/provider/scripted/Script"
import { waitUntil } from "../support/fakeDiscord"
import { makeLogCapture } from "../support/tools/logCapture"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Issue 11 done-when, delivery: the whole bot (real discord.js client, fake Discord, scripted
 * model) while Discord refuses writes mid-stream, on the plain bot path and the persona
 * webhook path. The turn's status for a final failure (error / delivery_failed) is the loop's
 * part; these tests assert what Discord shows and that the channel keeps answering.
 */

const SENTENCES = 60
const sentences = Array.from({ length: SENTENCES }, (_, i) => `This is sentence number ${i + 1}, which carries a few more words. `)
const fullText = sentences.join("")

/** A model streaming `parts` with a pause between them. */
const slowly = (parts: ReadonlyArray<string>, pause: Duration.Input = "15 millis"): ReadonlyArray<ScriptStep> =>
  [...parts.flatMap((part) => [text(part), sleep(pause)]), finish("stop")]

/** Lost and repeated numbered sentences in what the bot shows (messages split at whitespace: joined as they are). */
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

const editRoute = { bot: /^\/channels\/\d+\/messages\/\d+$/, webhook: /^\/webhooks\/\d+\/[^/]+\/messages\/\d+$/ } as const

/** The model streams the sentences to the first message and answers anything else briefly. */
const script = ({ request }: { readonly request: { readonly messages: ReadonlyArray<{ readonly content: string }> } }) =>
  request.messages.at(-1)?.content === "tell me everything" ? slowly(sentences) : reply("Still here.")

describe("honest delivery end to end (issue 11; real discord.js, fake Discord, scripted model)", () => {
  for (const path of ["bot", "webhook"] as const) {
    for (const [code, status] of [[10008, 404], [30046, 400], [10015, 404]] as const) {
      it.live(`${path} path: Discord refuses an edit with ${code} mid-reply — the whole reply is in Discord exactly once, and the next message is answered`, () =>
        Effect.gen(function*() {
          const { fake } = yield* botHarness({ script, ...(path === "webhook" ? { personaName: "Nerine" } : {}) })
          fake.failNext({ method: "PATCH", path: editRoute[path], status, code, skip: 2 })
          fake.userSays(fake.channel, "tell me everything", { mentionBot: true })
          yield* awaitBotMessages(fake, fake.channel.id, 1, "the whole reply", (contents) => contents.join("") === fullText, 20_000)
          assert.strictEqual(fake.pendingFaults, 0, "the refusal was answered")
          assert.deepStrictEqual(tally(fake.botMessages(fake.channel.id).map((message) => message.content)), { lost: 0, repeated: 0 })
          fake.userSays(fake.channel, "are you there?", { mentionBot: true })
          yield* awaitBotMessages(fake, fake.channel.id, 1, "the next answer", (contents) => contents.at(-1) === "Still here.", 10_000)
        }), 40_000)
    }

    it.live(`${path} path: 50013 mid-reply is final — logged as a delivery failure, nothing tried again, and the next message is answered`, () =>
      Effect.gen(function*() {
        const logs = yield* makeLogCapture
        const { fake } = yield* logs.capture(botHarness({ script, ...(path === "webhook" ? { personaName: "Nerine" } : {}) }))
        fake.failNext({ method: "PATCH", path: editRoute[path], status: 403, code: 50013, skip: 2 })
        fake.userSays(fake.channel, "tell me everything", { mentionBot: true })
        yield* waitUntil(fake, "the refusal", () => fake.pendingFaults === 0, 10_000)
        fake.userSays(fake.channel, "are you there?", { mentionBot: true })
        yield* awaitBotMessages(fake, fake.channel.id, 1, "the next answer", (contents) => contents.at(-1) === "Still here.", 20_000)
        assert.isAtLeast((yield* logs.matching("Discord delivery failed (missing_access)")).length, 1)
        // The refused reply was not continued: it shows less than the whole text.
        assert.isAbove(tally(fake.botMessages(fake.channel.id).map((message) => message.content)).lost, 0)
        assert.strictEqual(fake.requests.filter((request) => request.status === 403).length, 1)
      }), 40_000)
  }

  it.live("DISCORD_MAX_MESSAGES_PER_TURN=2: a reply needing more is cut with a visible marker", () =>
    Effect.gen(function*() {
      const long = Array.from({ length: 120 }, (_, i) => `Line ${i} of a very long answer that goes on and on. `)
      const { fake } = yield* botHarness({ script: [slowly(long, "2 millis")], maxMessagesPerTurn: 2 })
      fake.userSays(fake.channel, "write a book", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the cut reply", (contents) => contents[1]?.endsWith(CUT_MARKER) === true, 20_000)
      yield* Effect.sleep("500 millis")
      const contents = fake.botMessages(fake.channel.id).map((message) => message.content)
      assert.strictEqual(contents.length, 2)
      assert.isTrue(long.join("").startsWith(contents.join("").slice(0, -CUT_MARKER.length)))
    }), 40_000)

  it.live("[issue 25] a model that streams far past DISCORD_MAX_MESSAGES_PER_TURN is stopped at the reply's capacity (2 × 2000 + 2000 characters)", () =>
    Effect.gen(function*() {
      // 2,000 pieces of 50 characters: 100,000 characters, far more than two messages hold.
      const piece = "An answer that never ends, fifty characters long. "
      const { fake, probe } = yield* botHarness({ script: [[...Array.from({ length: 2000 }, () => text(piece)), finish("stop")]], maxMessagesPerTurn: 2 })
      fake.userSays(fake.channel, "write forever", { mentionBot: true })
      assert.strictEqual(yield* probe.awaitFinalized(0), "abandoned", "the provider was stopped before its end")
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the cut reply", (contents) => contents[1]?.endsWith(CUT_MARKER) === true, 20_000)
      const call = (yield* probe.calls)[0]
      // The stream is read up to the capacity and not much beyond (one piece past it).
      assert.isAtMost((call?.emitted ?? 0) * piece.length, 6000 + piece.length * 2)
      assert.isAtLeast((call?.emitted ?? 0) * piece.length, 6000)
      assert.strictEqual(fake.botMessages(fake.channel.id).length, 2)
    }), 40_000)
})
