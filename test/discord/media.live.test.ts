import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { ImageConfig } from "../../src/config/ImageConfig"
import { SpeechConfig } from "../../src/config/SpeechConfig"
import { sniffImage } from "../../src/media/imageFormat"
import { readOggOpus } from "../../src/media/oggOpus"
import * as OpenAiImages from "../../src/media/image/OpenAiImages"
import * as OpenAiSpeech from "../../src/media/speech/OpenAiSpeech"
import { callTool, fail, reply } from "../../src/provider/scripted/Script"
import { analyzeImageTool } from "../../src/tools/builtin/media/AnalyzeImageTool"
import { generateImageTool } from "../../src/tools/builtin/media/GenerateImageTool"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { generateVoiceMessageTool } from "../../src/tools/builtin/media/GenerateVoiceMessageTool"
import type { Tool } from "../../src/tools/Tool"
import { httpClient } from "../media/backendKit"
import { GuildImageTagsStore } from "../../src/store/GuildImageTagsStore"
import { IS_VOICE_MESSAGE, Permission, waitUntil } from "../support/fakeDiscord"
import { startFakeOpenAiImages } from "../support/fakeMedia/fakeOpenAiImages"
import { startFakeSpeech } from "../support/fakeMedia/fakeSpeech"
import { mediaServices } from "../support/fakeMedia/mediaToolKit"
import { imagesSent } from "../support/fakeProviders/vision"
import { pixelPng, voiceOgg } from "../support/mediaFixtures"
import { chatCompletionsBody } from "../../src/provider/openai/chatCompletionsRequest"
import { awaitBotMessages, botHarness } from "./botHarness"

const scoped = <A>(start: () => Promise<A & { readonly close: () => Promise<void> }>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** A media tool over its real backend layer (loopback fakes), built in the test's scope. */
const built = <R>(tool: Effect.Effect<Tool | undefined, never, R>, layer: Layer.Layer<R>) =>
  Effect.gen(function*() {
    const made = yield* Effect.provide(tool, yield* Layer.build(layer))
    if (made === undefined) throw new Error("tool not created")
    return made
  })

const bodyOptions = { maxTokensParameter: "max_tokens" as const, parallelToolCalls: undefined, includeUsage: false, extraBody: undefined }

describe("media on the fake Discord (real discord.js)", () => {
  it.live("generate_image: the image is a multipart upload, posted as an attachment replying to the trigger", () =>
    Effect.gen(function*() {
      const images = yield* scoped(() => startFakeOpenAiImages())
      const media = mediaServices()
      const tool = yield* built(generateImageTool, Layer.mergeAll(
        OpenAiImages.layer.pipe(Layer.provideMerge(Layer.mergeAll(httpClient, ImageConfig.make({ backend: Option.some("openai"), baseUrl: images.baseUrl }), media)))
      ))
      const { fake } = yield* botHarness({ script: [callTool("generate_image", { prompt: "a lighthouse" }, "Drawing it. "), reply("Here is your lighthouse.")], tools: [tool] })
      const trigger = fake.userSays(fake.channel, "draw a lighthouse", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the image and the reply", (contents) =>
        fake.botMessages(fake.channel.id).some((message) => message.attachments.length > 0) && contents.some((content) => content.includes("Here is your lighthouse.")))
      const [upload] = fake.requestsTo("POST", /\/channels\/\d+\/messages$/).filter((request) => request.files.length > 0)
      assert.isDefined(upload, "a multipart upload")
      assert.strictEqual(upload?.files[0]?.field, "files[0]")
      assert.strictEqual(upload?.files[0]?.contentType, "image/png")
      assert.deepStrictEqual([...(upload?.files[0]?.data ?? [])], [...pixelPng()])
      assert.deepStrictEqual((upload?.body?.["attachments"] as ReadonlyArray<{ id: string }>).map((entry) => entry.id), ["0"])
      const posted = fake.botMessages(fake.channel.id).find((message) => message.attachments.length > 0)
      assert.strictEqual(posted?.replyTo, trigger.id)
      const attachment = posted?.attachments[0] as { filename: string; content_type: string; url: string; width: number }
      assert.match(attachment.filename, /^img_[a-z2-7]{8}\.png$/)
      assert.strictEqual(attachment.content_type, "image/png")
      assert.strictEqual(attachment.width, 4)
      assert.deepStrictEqual(sniffImage(fake.attachmentData(attachment.url) ?? new Uint8Array(0))?.mimeType, "image/png")
      assert.isTrue(fake.botMessages(fake.channel.id).some((message) => message.content.includes("Here is your lighthouse.")))
    }))

  it.live("generate_voice_message: one Ogg Opus attachment with IS_VOICE_MESSAGE, duration_secs and a waveform, no text", () =>
    Effect.gen(function*() {
      const speech = yield* scoped(() => startFakeSpeech())
      const tool = yield* built(generateVoiceMessageTool, Layer.mergeAll(
        OpenAiSpeech.layer.pipe(Layer.provideMerge(Layer.merge(httpClient, SpeechConfig.make({ baseUrl: Option.some(speech.baseUrl) })))),
        mediaServices()
      ))
      const { fake } = yield* botHarness({ script: [callTool("generate_voice_message", { script: "Hello, voice!" }), reply("")], tools: [tool] })
      fake.userSays(fake.channel, "say hi out loud", { mentionBot: true })
      yield* waitUntil(fake, "the voice message", () => fake.botMessages(fake.channel.id).some((message) => ((message.flags ?? 0) & IS_VOICE_MESSAGE) !== 0))
      const voice = fake.botMessages(fake.channel.id).find((message) => ((message.flags ?? 0) & IS_VOICE_MESSAGE) !== 0)
      assert.strictEqual(voice?.content, "")
      assert.strictEqual(voice?.attachments.length, 1)
      const attachment = voice?.attachments[0] as { content_type: string; duration_secs: number; waveform: string; url: string }
      assert.strictEqual(attachment.content_type, "audio/ogg")
      assert.strictEqual(attachment.duration_secs, 1.5)
      assert.isAbove(Buffer.from(attachment.waveform, "base64").length, 0)
      assert.isAtMost(Buffer.from(attachment.waveform, "base64").length, 256)
      const bytes = fake.attachmentData(attachment.url) ?? Buffer.alloc(0)
      assert.deepStrictEqual([...bytes], [...voiceOgg()])
      assert.isTrue(readOggOpus(new Uint8Array(bytes))._tag === "Success")
    }))

  it.live("the fake refuses a malformed voice message as Discord does (text with the flag, missing metadata)", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("ok") })
      const post = (payload: Record<string, unknown>, withFile: boolean) =>
        Effect.promise(async () => {
          const form = new FormData()
          form.append("payload_json", JSON.stringify(payload))
          if (withFile) form.append("files[0]", new Blob([Buffer.from(voiceOgg())], { type: "audio/ogg" }), "voice.ogg")
          const response = await fetch(`${fake.apiBase}/v10/channels/${fake.channel.id}/messages`, { method: "POST", headers: { authorization: `Bot ${fake.token}` }, body: form })
          return { status: response.status, body: await response.json() as { code: number } }
        })
      const withText = yield* post({ content: "hi", flags: IS_VOICE_MESSAGE, attachments: [{ id: "0", filename: "voice.ogg", duration_secs: 1, waveform: "AA==" }] }, true)
      assert.strictEqual(withText.body.code, 50159)
      const noMeta = yield* post({ flags: IS_VOICE_MESSAGE, attachments: [{ id: "0", filename: "voice.ogg" }] }, true)
      assert.strictEqual(noMeta.body.code, 50161)
      const undescribed = yield* post({ content: "file", attachments: [] }, true)
      assert.strictEqual(undescribed.body.code, 50035)
    }))

  it.live("a user's image reaches the vision model inline; the text-only fallback of the same turn gets only the placeholder", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({
        script: [[fail("Server", "model-a is down", { status: 503 })], reply("It is a small picture.")],
        routePlan: { models: ["model-a", "model-b"] },
        media: mediaServices({ vision: { visionModels: ["model-a"] } })
      })
      fake.userSays(fake.channel, "what is this?", { mentionBot: true, files: [{ data: pixelPng(), filename: "pixel.png", contentType: "image/png" }] })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the fallback's answer", (contents) => contents.some((content) => content.includes("small picture")))
      const [primary, fallback] = yield* probe.requests
      assert.strictEqual(primary?.model, "model-a")
      assert.strictEqual(fallback?.model, "model-b")
      const seenByPrimary = imagesSent("openai", chatCompletionsBody(primary!, bodyOptions))
      assert.strictEqual(seenByPrimary.images.length, 1)
      assert.deepStrictEqual([...(seenByPrimary.images[0]?.bytes ?? [])], [...pixelPng()])
      const seenByFallback = imagesSent("openai", chatCompletionsBody(fallback!, bodyOptions))
      assert.strictEqual(seenByFallback.images.length + seenByFallback.urls.length, 0, "no image part reaches the text-only fallback")
      assert.match(seenByFallback.text, /\[image media_id=img_[a-z2-7]{8}: not visible to you\]/)
      assert.notInclude(JSON.stringify(fallback), "/attachments/", "never the attachment URL")
    }))
})

describe("/image-tags (Manage Server)", () => {
  it.live("sets, shows and clears this server's tags; members without Manage Server are refused", () =>
    Effect.gen(function*() {
      const { context, fake } = yield* botHarness({ script: () => reply("ok") })
      const run = (subcommand: string, options: Readonly<Record<string, string>> = {}, permissions: bigint = Permission.ManageGuild) =>
        Effect.gen(function*() {
          const interaction = fake.slash("image-tags", { subcommand, options, permissions })
          yield* waitUntil(fake, `/image-tags ${subcommand}`, () => interaction.original !== undefined)
          return interaction.original?.content ?? ""
        })
      assert.include(yield* run("show", {}, 0n), "Manage Server")
      assert.include(yield* run("show"), "uses the bot's default image tags")
      assert.include(yield* run("set", { positive: "ink sketch", negative: "color" }), "positive `ink sketch`, negative `color`")
      const stored = yield* Effect.provide(Effect.flatMap(GuildImageTagsStore, (store) => store.get(fake.guild.id)), context)
      assert.deepStrictEqual(stored, Option.some({ positive: "ink sketch", negative: "color" }))
      assert.include(yield* run("show"), "positive `ink sketch`")
      assert.include(yield* run("clear"), "cleared")
      assert.isTrue(Option.isNone(yield* Effect.provide(Effect.flatMap(GuildImageTagsStore, (store) => store.get(fake.guild.id)), context)))
    }))
})

describe("analyze_image on the fake Discord", () => {
  it.live("a reply without an image: the image of the message it replies to (looked up on Discord) reaches the vision model", () =>
    Effect.gen(function*() {
      const vision = yield* Layer.build(Scripted.layer({ script: () => reply("A 4×3 picture: red, green, blue, white.") }))
      const visionProbe = Context.get(vision, ScriptedProbe)
      // Built in the test's scope: safe_http's connection pool must outlive the tool's construction.
      const media = yield* Layer.build(mediaServices())
      const { fake } = yield* botHarness({
        script: ({ index }) => (index === 0 ? callTool("analyze_image", { question: "what is it?" }) : reply("It is a tiny colour chart.")),
        frontTools: Effect.map(
          analyzeImageTool({ model: "vision-model", apiKey: undefined }).pipe(Effect.provide(Context.merge(vision, media))),
          (tool) => [tool]
        ),
        // Only the replied-to image, outside the history the turn loads: the lookup must find it on Discord.
        front: { historyLimit: 1, minEditInterval: "50 millis", typingRefresh: "200 millis" }
      })
      const original = fake.userSays(fake.channel, "my chart", { files: [{ data: pixelPng(), filename: "chart.png", contentType: "image/png" }] })
      fake.userSays(fake.channel, "filler", { author: fake.user("bob") })
      fake.userSays(fake.channel, "what is in it?", { mentionBot: true, replyTo: original.id })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", (contents) => contents.some((content) => content.includes("colour chart")))
      const [asked] = yield* visionProbe.requests
      assert.strictEqual(asked?.model, "vision-model")
      const image = asked?.messages[0]?.images?.[0]?.url ?? ""
      assert.deepStrictEqual([...Buffer.from(image.split(",")[1] ?? "", "base64")], [...pixelPng()])
    }))
})
