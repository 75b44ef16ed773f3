import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { reasoningTagsLayer } from "../../src/provider/reasoningTags"
import { reply } from "../../src/provider/scripted/Script"
import { type FakeDiscord, Permission, waitUntil } from "../support/fakeDiscord"
import { fakeLlmServer, type FakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * `<think>…</think>` from a model (DeepSeek-R1, Qwen3) over the real OpenAI-compatible provider,
 * its SSE body written a few bytes at a time, into a real discord.js client on the fake Discord:
 * nothing of the reasoning is ever shown, not in any intermediate edit.
 */

const REASONING = "Let me think about what the user wants"
const ANSWER = "The answer is forty-two, as everyone knows."

/** The deltas split inside both tags; the body split into 5-byte writes on top. */
const thinkingStream = () =>
  openAiStream([
    textChunk("<th"),
    textChunk("ink>Let me "),
    textChunk("think about what"),
    textChunk(" the user wants</th"),
    textChunk("ink>\n\nThe answer "),
    textChunk("is forty-two, "),
    textChunk("as everyone knows."),
    finishChunk("stop"),
    usageChunk(20, 30)
  ], { splitSizes: [5], gapMs: 0 })

// As main wires it: the provider behind the reasoning-tag stage.
const openAiModel = (server: FakeLlmServer) =>
  reasoningTagsLayer(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }).pipe(Layer.provide(providerHttpClient())))

/** Every text the bot ever sent or edited into a message of the channel (each edit included). */
const everythingShown = (fake: FakeDiscord) =>
  fake.requests
    .filter((request) => (request.method === "POST" || request.method === "PATCH") && /\/(channels\/\d+\/messages|webhooks\/)/.test(request.path))
    .map((request) => JSON.stringify(request.body ?? {}))

describe("reasoning written into the text, on Discord", () => {
  it.live("a <think> block split across SSE writes never reaches Discord, not even in an edit; the thought log gets it", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer({ handler: thinkingStream })
      const { fake, thoughtLogChannelId } = yield* botHarness({
        script: () => reply("unused"),
        model: openAiModel(server),
        routePlan: { models: ["qwen3"] },
        thoughtLogChannel: true,
        front: { minEditInterval: "1 millis" }
      })
      fake.userSays(fake.channel, "what is the answer?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", ([content]) => content === ANSWER)
      const [message] = fake.botMessages(fake.channel.id)
      // Streamed in several edits, none of which showed any of the reasoning or its tags.
      assert.isAbove(message?.history.length ?? 0, 1)
      for (const shown of [...(message?.history ?? []), ...everythingShown(fake)]) {
        assert.notMatch(shown, /think|Let me|the user wants|<th|<\/|ink>/i, shown)
      }
      yield* waitUntil(fake, "the reasoning in the thought log", () =>
        fake.botMessages(thoughtLogChannelId).some((posted) => JSON.stringify(posted.embeds).includes(REASONING)))
      // Nothing was posted below the reply: the server did not ask for it.
      assert.lengthOf(fake.botMessages(fake.channel.id), 1)
    }), 30_000)

  it.live("with reasoning_as_spoiler the reasoning follows the reply behind a spoiler; with reasoning_as_file as reasoning.txt", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer({ handler: thinkingStream })
      const { fake } = yield* botHarness({ script: () => reply("unused"), model: openAiModel(server), routePlan: { models: ["qwen3"] } })
      const admin = { permissions: Permission.ManageGuild }
      const spoiler = fake.slash("capabilities", { subcommand: "manage", options: { capability: "reasoning_as_spoiler", enabled: true }, ...admin })
      yield* waitUntil(fake, "/capabilities", () => spoiler.original !== undefined)
      fake.userSays(fake.channel, "what is the answer?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the answer and its reasoning")
      const [answer, shown] = fake.botMessages(fake.channel.id)
      assert.strictEqual(answer?.content, ANSWER)
      assert.strictEqual(shown?.content, `🧠 Reasoning:\n||${REASONING}||`)

      const file = fake.slash("capabilities", { subcommand: "manage", options: { capability: "reasoning_as_file", enabled: true }, ...admin })
      yield* waitUntil(fake, "/capabilities file", () => file.original !== undefined)
      fake.userSays(fake.channel, "again?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 4, "the second answer and its file")
      const attached = fake.botMessages(fake.channel.id)[3]
      const attachment = attached?.attachments[0]
      assert.strictEqual(attachment?.["filename"], "reasoning.txt")
      assert.strictEqual(fake.attachmentData(String(attachment?.["url"]))?.toString("utf8"), REASONING)
    }), 30_000)
})
