import { assert, describe, it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Schema } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { callTool, finish, reply, sleep, text } from "../../src/provider/scripted/Script"
import { PersonaBlockStore } from "../../src/store/PersonaBlockStore"
import { makeTool } from "../../src/tools/Tool"
import { Permission, waitUntil } from "../support/fakeDiscord"
import { awaitBotMessages, botHarness } from "./botHarness"
import { hangingHttpServer } from "../support/hangingHttpServer"

/** Streams `parts` with a pause between them (a model producing tokens). */
const slowly = (parts: ReadonlyArray<string>, pause: Duration.Input = "40 millis") => [...parts.flatMap((part) => [text(part), sleep(pause)]), finish("stop")]


describe("the Discord bot end to end (real discord.js, fake Discord, scripted model)", () => {
  it.live("a mention is answered by a streamed reply to it; the model sees the history with names; nobody is pinged", () =>
    Effect.gen(function*() {
      const parts = ["Hello ", "@everyone, ", "this reply ", "streams in ", "several ", "pieces."]
      const { fake, probe } = yield* botHarness({ script: [slowly(parts)] })
      const bob = fake.user("bob")
      fake.userSays(fake.channel, "earlier chatter", { author: bob })
      const trigger = fake.userSays(fake.channel, "hi bot", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the full reply", ([content]) => content === parts.join(""))
      const [message] = fake.botMessages(fake.channel.id)
      assert.strictEqual(message?.replyTo, trigger.id)
      // Streamed: the message was edited as text arrived.
      assert.isAbove(message?.history.length ?? 0, 1)
      for (const request of fake.requests.filter((r) => /\/messages/.test(r.path) && (r.method === "POST" || r.method === "PATCH"))) {
        assert.deepStrictEqual((request.body?.["allowed_mentions"] as { parse?: unknown } | undefined)?.parse, [])
      }
      // Typing was shown while the turn ran and stops with it (refresh every 200 ms here).
      const typing = fake.requestsTo("POST", /\/typing$/).length
      assert.isAtLeast(typing, 1)
      yield* Effect.sleep("600 millis")
      assert.strictEqual(fake.requestsTo("POST", /\/typing$/).length, typing)
      const [request] = yield* probe.requests
      const last = request?.messages.at(-1)
      assert.strictEqual(last?.content, "hi bot")
      assert.strictEqual(last?.name, "alice")
      assert.isTrue(request?.messages.some((m) => m.content === "earlier chatter" && m.name === "bob"))
    }))

  it.live("a 5000-character reply with a code block arrives as valid ≤2000-character messages with the fence reopened", () =>
    Effect.gen(function*() {
      const code = Array.from({ length: 150 }, (_, i) => `  console.log("line ${i} of the program")`).join("\n")
      const answer = `Here is the script:\n\n\`\`\`js\n${code}\n\`\`\`\n\nRun it with node.`
      const chunks = Array.from({ length: Math.ceil(answer.length / 250) }, (_, i) => answer.slice(i * 250, (i + 1) * 250))
      const { fake } = yield* botHarness({ script: [slowly(chunks, "5 millis")] })
      fake.userSays(fake.channel, "write a long script", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "the whole answer", (contents) => contents.at(-1)?.endsWith("Run it with node.") === true)
      const contents = fake.botMessages(fake.channel.id).map((message) => message.content)
      assert.isAbove(answer.length, 5000)
      for (const content of contents) {
        assert.isAtMost(content.length, 2000)
        assert.strictEqual((content.match(/^```/gm) ?? []).length % 2, 0, content.slice(0, 60))
      }
      assert.isTrue(contents.slice(1).every((content) => content.startsWith("```js\n") || !content.includes("console.log")))
      assert.isTrue(fake.requests.every((request) => request.status !== 400))
    }))

  it.live("DMs and replies to the bot are answered; other bots, plain chatter and muted users are not", () =>
    Effect.gen(function*() {
      const { fake, context } = yield* botHarness({ script: () => reply("ok") })
      const carol = fake.user("carol")
      const dm = fake.dmChannel(carol)
      fake.userSays(dm, "hello in private", { author: carol })
      yield* awaitBotMessages(fake, dm.id, 1, "the DM answer")
      fake.userSays(fake.channel, "just chatting", { author: fake.user("dave") })
      fake.userSays(fake.channel, "I am a bot", { author: fake.user("otherbot", { bot: true }), mentionBot: true })
      const mallory = fake.user("mallory")
      yield* Effect.provide(
        Effect.flatMap(PersonaBlockStore, (store) =>
          store.block({ guildId: fake.guild.id, personaId: undefined, userId: mallory.id, userName: "mallory", mode: "mute", hours: 1 })),
        context
      )
      fake.userSays(fake.channel, "muted but mentioning", { author: mallory, mentionBot: true })
      const first = fake.userSays(fake.channel, "ping", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the mention answer")
      const [answer] = fake.botMessages(fake.channel.id)
      fake.userSays(fake.channel, "replying to you", { replyTo: answer?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the reply answer")
      yield* Effect.sleep("300 millis")
      const replies = fake.botMessages(fake.channel.id)
      assert.strictEqual(replies.length, 2)
      assert.strictEqual(replies[0]?.replyTo, first.id)
    }))

  it.live("/channel enable makes the bot answer every message there; /channel disable stops it (Manage Channels)", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("answered") })
      const denied = fake.slash("channel", { subcommand: "enable" })
      yield* waitUntil(fake, "denied reply", () => denied.original?.content.includes("Manage Channels") === true)
      const enable = fake.slash("channel", { subcommand: "enable", permissions: Permission.ManageChannels })
      yield* waitUntil(fake, "enabled", () => enable.original?.content.startsWith("✅") === true)
      assert.strictEqual(enable.callbacks[0]?.["type"], 5)
      assert.strictEqual(((enable.callbacks[0]?.["data"] as { flags?: number } | undefined)?.flags ?? 0) & 64, 64)
      fake.userSays(fake.channel, "no mention needed now")
      yield* awaitBotMessages(fake, fake.channel.id, 1, "answer in enabled channel")
      const disable = fake.slash("channel", { subcommand: "disable", permissions: Permission.ManageChannels })
      yield* waitUntil(fake, "disabled", () => disable.original?.content.startsWith("✅") === true)
      fake.userSays(fake.channel, "ignored again")
      yield* Effect.sleep("300 millis")
      assert.strictEqual(fake.botMessages(fake.channel.id).length, 1)
    }))

  it.live("[§2.8] a new message while a reply streams interrupts it (follow_up_interrupt) and is answered next", () =>
    Effect.gen(function*() {
      const long = Array.from({ length: 40 }, (_, i) => `chunk${i} `)
      const { fake } = yield* botHarness({
        script: ({ request }) => (request.messages.at(-1)?.content === "first question" ? slowly(long, "50 millis") : reply("Answer to the second."))
      })
      fake.userSays(fake.channel, "first question", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the first reply started", ([content]) => (content?.length ?? 0) > 10)
      const second = fake.userSays(fake.channel, "second question", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the second answer", (contents) => contents[1] === "Answer to the second.")
      const [first, answer] = fake.botMessages(fake.channel.id)
      // The first reply stopped partway: what was shown stays, the rest was never generated into Discord.
      assert.isBelow(first?.content.length ?? 0, long.join("").length)
      assert.isFalse(first?.content.endsWith(STOPPED_MARKER))
      assert.strictEqual(answer?.replyTo, second.id)
    }))

  it.live("[§2.8 16] a new message during a tool chain does not abort the chain; it is answered afterwards", () =>
    Effect.gen(function*() {
      const toolStarted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const waiting = makeTool({
        name: "look_up",
        description: "Looks something up.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () => Effect.andThen(Effect.andThen(Deferred.succeed(toolStarted, undefined), Deferred.await(release)), Effect.succeed(toolSuccess({ found: 42 })))
      })
      const { fake } = yield* botHarness({
        tools: [waiting],
        script: ({ index }) =>
          index === 0 ? callTool("look_up", {}, "Let me look. ") : index === 1 ? reply("It is 42.") : reply("Now the second one.")
      })
      fake.userSays(fake.channel, "what is it?", { mentionBot: true })
      yield* Deferred.await(toolStarted)
      fake.userSays(fake.channel, "and another thing", { mentionBot: true })
      yield* Effect.sleep("100 millis")
      yield* Deferred.succeed(release, undefined)
      yield* awaitBotMessages(fake, fake.channel.id, 3, "three messages", (contents) => contents[2] === "Now the second one.")
      assert.deepStrictEqual(fake.botMessages(fake.channel.id).map((m) => m.content), ["Let me look. ", "It is 42.", "Now the second one."])
    }))

  it.live("[§2.8 /kill] /kill mid-tool closes the tool's socket, keeps the partial reply marked stopped, queues the stop response; the next message is answered normally", () =>
    Effect.gen(function*() {
      const server = yield* hangingHttpServer
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
        script: ({ index }) =>
          index === 0 ? callTool("slow_fetch", {}, "Fetching that page now. ") : index === 1 ? reply("Okay, I stopped.") : reply("Fresh answer.")
      })
      fake.userSays(fake.channel, "fetch it", { mentionBot: true })
      yield* Deferred.await(server.arrived)
      const kill = fake.slash("kill")
      yield* Deferred.await(server.closed).pipe(Effect.timeoutOrElse({ duration: "3 seconds", orElse: () => Effect.fail(new Error("the tool's socket was not closed")) }))
      yield* waitUntil(fake, "kill acknowledged", () => kill.original?.content.startsWith("⏹") === true)
      assert.strictEqual(kill.callbacks[0]?.["type"], 5)
      yield* awaitBotMessages(fake, fake.channel.id, 2, "partial reply and stop response", (contents) => contents.includes("Okay, I stopped."))
      const [partial] = fake.botMessages(fake.channel.id)
      assert.strictEqual(partial?.content, `Fetching that page now. ${STOPPED_MARKER}`)
      // The stop response turn saw the note that the user stopped the reply.
      const requests = yield* probe.requests
      assert.isTrue(requests[1]?.messages.some((m) => m.content.includes("/kill")) === true)
      fake.userSays(fake.channel, "next question", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "the next answer", (contents) => contents.includes("Fresh answer."))
    }))

  it.live("[§4 61] /kill while the model streams: the stream is interrupted, the partial reply stays marked stopped", () =>
    Effect.gen(function*() {
      const long = Array.from({ length: 60 }, (_, i) => `word${i} `)
      const { fake, probe } = yield* botHarness({ script: ({ index }) => (index === 0 ? slowly(long, "50 millis") : reply("Stopped, as you asked.")) })
      fake.userSays(fake.channel, "tell me a long story", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the story started", ([content]) => (content?.length ?? 0) > 20)
      const kill = fake.slash("kill")
      assert.strictEqual(yield* probe.awaitFinalized(0), "interrupted")
      yield* waitUntil(fake, "kill answered", () => kill.original?.content === "⏹ Stopped the reply.")
      yield* awaitBotMessages(fake, fake.channel.id, 2, "stop response", (contents) => contents[1] === "Stopped, as you asked.")
      const [partial] = fake.botMessages(fake.channel.id)
      assert.isTrue(partial?.content.endsWith(STOPPED_MARKER))
      assert.isBelow(partial?.content.length ?? 0, long.join("").length)
    }))

  it.live("[§2.8] /kill cancels the queued turns first: they are never answered", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const blocking = makeTool({
        name: "wait_forever",
        description: "Waits.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
      })
      const { fake, probe } = yield* botHarness({
        tools: [blocking],
        script: ({ index }) => (index === 0 ? callTool("wait_forever", {}) : reply("stop acknowledged"))
      })
      fake.userSays(fake.channel, "first", { mentionBot: true })
      yield* Deferred.await(started)
      fake.userSays(fake.channel, "second", { mentionBot: true })
      fake.userSays(fake.channel, "third", { mentionBot: true })
      yield* Effect.sleep("100 millis")
      const kill = fake.slash("kill")
      yield* waitUntil(fake, "kill answered", () => kill.original !== undefined)
      assert.strictEqual(kill.original?.content, "⏹ Stopped the reply and cancelled 2 queued replies.")
      yield* awaitBotMessages(fake, fake.channel.id, 1, "stop response", (contents) => contents.includes("stop acknowledged"))
      yield* Effect.sleep("300 millis")
      // Only the stop response ran after the kill: "second" and "third" were never sent to the model.
      const asked = (yield* probe.requests).map((request) => request.messages.at(-1)?.content)
      assert.isFalse(asked.includes("second") || asked.includes("third"))
      assert.strictEqual((yield* probe.requests).length, 2)
    }))

  it.live("a persona (BOT_PERSONA_NAME) replies through the channel webhook with its name", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: [reply("Persona speaking.")], personaName: "Nerine" })
      fake.userSays(fake.channel, "hello persona", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "persona reply", ([content]) => content === "Persona speaking.")
      const [message] = fake.botMessages(fake.channel.id)
      assert.strictEqual(message?.author.username, "Nerine")
      assert.isDefined(message?.webhookId)
    }))

  it.live("[issue 11] a reply without a mention to the persona's webhook message is answered; a reply to another webhook's message is not", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({
        // The last line: a reply's context starts with a "[replying to …]" annotation line.
        script: ({ request }) => reply(`Answer to ${request.messages.at(-1)?.content.split("\n").at(-1) ?? ""}.`),
        personaName: "Nerine"
      })
      fake.userSays(fake.channel, "hello persona", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "persona reply", ([content]) => content === "Answer to hello persona.")
      const [personaMessage] = fake.botMessages(fake.channel.id)
      assert.isDefined(personaMessage?.webhookId)
      const other = fake.webhookSays(fake.channel, "A message from another integration.")
      fake.userSays(fake.channel, "replying to the other integration", { replyTo: other.id })
      fake.userSays(fake.channel, "replying to you, persona", { replyTo: personaMessage?.id ?? "" })
      const fromPersona = () => fake.botMessages(fake.channel.id).filter((message) => message.webhookId === personaMessage?.webhookId)
      yield* waitUntil(fake, "the answer to the reply", () => fromPersona().some((message) => message.content === "Answer to replying to you, persona."))
      yield* Effect.sleep("300 millis")
      const asked = (yield* probe.requests).map((request) => request.messages.at(-1)?.content.split("\n").at(-1))
      assert.deepStrictEqual(asked, ["hello persona", "replying to you, persona"])
      assert.strictEqual(fromPersona().length, 2)
    }))
})
