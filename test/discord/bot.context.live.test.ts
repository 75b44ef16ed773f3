import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { DiscordBlockTargetResolver } from "../../src/discord/DiscordBlockTargetResolver"
import { DiscordClient } from "../../src/discord/DiscordClient"
import { STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { TurnEffect } from "../../src/domain/TurnEffect"
import { callTool, reply } from "../../src/provider/scripted/Script"
import { PersonaBlockStore } from "../../src/store/PersonaBlockStore"
import { BlockTargetResolver } from "../../src/tools/builtin/blocking/BlockTargetResolver"
import { makeTool } from "../../src/tools/Tool"
import { fakeDiscord, Permission, waitUntil } from "../support/fakeDiscord"
import { awaitBotMessages, botHarness } from "./botHarness"

const echoTool = makeTool({
  name: "echo_tool",
  description: "Echoes its input. Useful for testing.",
  category: "utility",
  triggerPatterns: [/\becho\b/i],
  parameters: Schema.Struct({ text: Schema.String }),
  execute: (args) => Effect.succeed(toolSuccess({ echoed: args.text }))
})

describe("the Discord bot: context, commands, thought log, stickers", () => {
  it.live("context: names, reply annotations, image URLs for vision, mentions cleaned, the bot's stopped marker removed", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("seen") })
      const bob = fake.user("bob")
      const earlier = fake.userSays(fake.channel, "look at this cat", {
        author: bob,
        attachments: [{ url: "http://127.0.0.1:1/cat.png", contentType: "image/png" }]
      })
      fake.userSays(fake.channel, `<@${bob.id}> nice one`, { replyTo: earlier.id })
      fake.userSays(fake.channel, "what do you see?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the reply")
      fake.userSays(fake.channel, "and now?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the second reply")
      const requests = yield* probe.requests
      const messages = requests[1]?.messages ?? []
      const cat = messages.find((m) => m.content === "look at this cat")
      // By Discord's media proxy, never the original URL (issue 12 item 9).
      const proxied = `${fake.mediaProxyBase}/attachments/${fake.channel.id}/${String(earlier.attachments[0]?.["id"])}/image.png`
      assert.deepStrictEqual(cat?.images, [{ url: proxied, mimeType: "image/png", sizeBytes: 1024 }])
      assert.strictEqual(cat?.role, "user")
      const answer = messages.find((m) => m.content.includes("nice one"))
      assert.strictEqual(answer?.content, `[replying to bob: "look at this cat"]\n@bob nice one`)
      assert.strictEqual(messages.at(-2)?.role, "assistant")
      assert.strictEqual(messages.at(-2)?.content, "seen")
      assert.strictEqual(messages.at(-1)?.content, "and now?")
      assert.isFalse(messages.some((m) => m.content.includes(STOPPED_MARKER)))
    }))

  it.live("images of attachments and embeds reach the model by Discord's proxy URL only, never the original", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("seen") })
      // Originals on a loopback port nothing listens on: a test never reaches out, even if the code is wrong.
      const original = (name: string) => `http://127.0.0.1:9/original/${name}`
      const proxy = (name: string) => `${fake.mediaProxyBase}/external/${name}`
      fake.userSays(fake.channel, "three pictures and a note", {
        attachments: [
          { url: original("photo.jpg"), contentType: "image/jpeg", filename: "photo.jpg", size: 48_213 },
          { url: original("notes.txt"), contentType: "text/plain", filename: "notes.txt" }
        ],
        embeds: [
          // An image link: Discord's embed carries the picture as its thumbnail.
          { type: "image", url: original("linked.png"), thumbnail: { url: original("linked.png"), proxy_url: proxy("linked.png"), width: 640, height: 480 } },
          // A link preview: its image, not its thumbnail.
          {
            type: "rich",
            title: "An article",
            url: original("article"),
            image: { url: original("hero.webp"), proxy_url: proxy("hero.webp"), width: 1200, height: 630 },
            thumbnail: { url: original("logo.png"), proxy_url: proxy("logo.png"), width: 64, height: 64 }
          },
          // Not processed by Discord: no proxy URL, so no picture.
          { type: "rich", title: "raw", image: { url: original("unproxied.png") } }
        ]
      })
      fake.userSays(fake.channel, "what do you see?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the reply")
      const [request] = yield* probe.requests
      const pictures = (request?.messages ?? []).find((m) => m.content === "three pictures and a note")
      const [attachment] = fake.messages(fake.channel.id)[0]?.attachments ?? []
      assert.deepStrictEqual(pictures?.images, [
        { url: String(attachment?.["proxy_url"]), mimeType: "image/jpeg", sizeBytes: 48_213 },
        { url: proxy("linked.png") },
        { url: proxy("hero.webp") }
      ])
      assert.isFalse(JSON.stringify(request?.messages).includes("127.0.0.1:9/original"), "no original URL reaches the model")
    }))

  it.live("[seed 002] a blocked user's messages become one notice and are not quoted by replies", () =>
    Effect.gen(function*() {
      const { fake, probe, context } = yield* botHarness({ script: () => reply("ok") })
      const troll = fake.user("troll")
      yield* Effect.provide(
        Effect.flatMap(PersonaBlockStore, (store) =>
          store.block({ guildId: fake.guild.id, personaId: undefined, userId: troll.id, userName: "troll", mode: "block", hours: 2 })),
        context
      )
      const bad = fake.userSays(fake.channel, "first rude thing", { author: troll })
      fake.userSays(fake.channel, "second rude thing", { author: troll })
      fake.userSays(fake.channel, "ignore them please", { replyTo: bad.id, mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the reply")
      const [request] = yield* probe.requests
      const contents = (request?.messages ?? []).map((m) => m.content)
      assert.isFalse(contents.some((content) => content.includes("rude")))
      const notices = contents.filter((content) => content.startsWith("[System: troll sent a message but is currently blocked by you for 2 more hours"))
      assert.strictEqual(notices.length, 1)
      assert.strictEqual(contents.at(-1), "ignore them please")
    }))

  it.live("/tools lists what the model can use; /capabilities shows and changes settings (Manage Server); deliberate mode then gates tools by the message", () =>
    Effect.gen(function*() {
      const secret = makeTool({
        name: "secret_tool",
        description: "Not asked for.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () => Effect.succeed(toolSuccess("ran"))
      })
      const { fake, probe } = yield* botHarness({
        tools: [echoTool, secret],
        script: ({ index }) => (index === 0 ? callTool("secret_tool", {}) : reply("ok"))
      })
      const tools = fake.slash("tools")
      yield* waitUntil(fake, "/tools answer", () => tools.original !== undefined)
      assert.include(tools.original?.content ?? "", "`echo_tool`: Echoes its input.")
      assert.include(tools.original?.content ?? "", "model-a")
      const denied = fake.slash("capabilities", { subcommand: "show" })
      yield* waitUntil(fake, "denied", () => denied.original !== undefined)
      assert.include(denied.original?.content ?? "", "Manage Server")
      const manage = fake.slash("capabilities", {
        subcommand: "manage",
        options: { capability: "deliberate_tool_mode", enabled: true },
        permissions: Permission.ManageGuild
      })
      yield* waitUntil(fake, "manage answer", () => manage.original !== undefined)
      assert.include(manage.original?.content ?? "", "`deliberate_tool_mode` is now **on**")
      const show = fake.slash("capabilities", { subcommand: "show", permissions: Permission.ManageGuild })
      yield* waitUntil(fake, "show answer", () => show.original !== undefined)
      assert.include(show.original?.content ?? "", "🟢 `deliberate_tool_mode`")
      assert.include(show.original?.content ?? "", "⚪ `user_blocking_enabled`")
      const listed = fake.slash("tools")
      yield* waitUntil(fake, "/tools answer in deliberate mode", () => listed.original !== undefined)
      assert.include(listed.original?.content ?? "", "Deliberate tool mode is on")
      // The message asks for echo_tool only: the model's call of another tool is blocked.
      fake.userSays(fake.channel, "please echo this back", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "reply")
      const requests = yield* probe.requests
      const replayed = requests[1]?.functionHistory[0]?.functionResponse.response.result
      assert.deepInclude(replayed as object, { status: "blocked_by_deliberate_tool_mode", allowedToolNames: ["echo_tool"] })
    }))

  it.live("/mcp add, list, disable, remove (Manage Server) through the MCP admin service", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("ok") })
      const admin = { permissions: Permission.ManageGuild }
      const add = fake.slash("mcp", { ...admin, subcommand: "add", options: { name: "search", url: "http://127.0.0.1:9/mcp", header: "Authorization: Bearer s3cret" } })
      yield* waitUntil(fake, "add", () => add.original !== undefined)
      assert.include(add.original?.content ?? "", "Added MCP server **search**")
      const bad = fake.slash("mcp", { ...admin, subcommand: "add", options: { name: "bad name!", url: "http://127.0.0.1:9/mcp" } })
      yield* waitUntil(fake, "bad add", () => bad.original !== undefined)
      assert.include(bad.original?.content ?? "", "⚠️")
      const list = fake.slash("mcp", { ...admin, subcommand: "list" })
      yield* waitUntil(fake, "list", () => list.original !== undefined)
      assert.include(list.original?.content ?? "", "**search** (generic)")
      assert.include(list.original?.content ?? "", "headers: Authorization")
      assert.notInclude(list.original?.content ?? "", "s3cret")
      const disable = fake.slash("mcp", { ...admin, subcommand: "disable", options: { name: "search" } })
      yield* waitUntil(fake, "disable", () => disable.original !== undefined)
      assert.include(disable.original?.content ?? "", "Disabled")
      const remove = fake.slash("mcp", { ...admin, subcommand: "remove", options: { name: "search" } })
      yield* waitUntil(fake, "remove", () => remove.original !== undefined)
      const again = fake.slash("mcp", { ...admin, subcommand: "remove", options: { name: "search" } })
      yield* waitUntil(fake, "remove again", () => again.original !== undefined)
      assert.include(again.original?.content ?? "", "No MCP server named 'search'")
      const user = fake.slash("mcp", { subcommand: "list" })
      yield* waitUntil(fake, "user list", () => user.original !== undefined)
      assert.include(user.original?.content ?? "", "Manage Server")
      // Slash commands were registered once at start-up.
      assert.deepStrictEqual([...fake.registeredCommands.get("global") ?? []].map((c) => c["name"]).sort(), [
        "access", "approvals", "capabilities", "channel", "image-tags", "key", "kill", "mcp", "model", "persona", "settings", "tools", "triggers", "usage"
      ])
    }))

  it.live("a failed tool posts a hidden notice to THOUGHT_LOG_CHANNEL_ID; a chosen sticker is sent after the reply", () =>
    Effect.gen(function*() {
      const failing = makeTool({
        name: "broken_tool",
        description: "Always fails.",
        category: "utility",
        parameters: Schema.Struct({}),
        execute: () => Effect.succeed(toolFailure("the backend is down"))
      })
      const sticker = makeTool({
        name: "select_sticker_for_response",
        description: "Picks a sticker.",
        category: "discord",
        parameters: Schema.Struct({ sticker_id: Schema.String }),
        turnEffect: "StickerSelected",
        execute: (args) =>
          Effect.succeed(toolSuccess({ sticker_id: args.sticker_id }, { turnEffect: TurnEffect.StickerSelected({ sticker: { id: args.sticker_id, name: "wave" } }) }))
      })
      const stickerId = "123456789012345678"
      const { fake, thoughtLogChannelId } = yield* botHarness({
        tools: [failing, sticker],
        fake: { stickers: [{ id: stickerId, name: "wave" }] },
        thoughtLogChannel: true,
        script: ({ index }) =>
          index === 0
            ? callTool("broken_tool", {})
            : index === 1
            ? callTool("select_sticker_for_response", { sticker_id: stickerId })
            : reply("Here you go.")
      })
      fake.userSays(fake.channel, "do it", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "reply and sticker", (contents) => contents[0] === "Here you go.")
      const [, stickerMessage] = fake.botMessages(fake.channel.id)
      assert.deepStrictEqual(stickerMessage?.stickerIds, [stickerId])
      const logChannel = thoughtLogChannelId
      yield* waitUntil(fake, "thought log embed", () => fake.botMessages(logChannel).length >= 1)
      const [notice] = fake.botMessages(logChannel)
      assert.include(String(notice?.embeds[0]?.["title"]), "broken_tool")
      assert.include(String(notice?.embeds[0]?.["description"]), "the backend is down")
    }))

  it.live("the block-target resolver finds members by mention or name and flags admins", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const alice = fake.user("alice")
      fake.user("boss", { admin: true })
      const layer = DiscordBlockTargetResolver.pipe(
        Layer.provide(DiscordClient.layer),
        Layer.provide(DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase }))
      )
      const resolver = yield* Effect.provide(BlockTargetResolver, yield* Layer.build(layer))
      const byMention = yield* resolver.resolve(fake.guild.id, `<@${alice.id}>`)
      assert.strictEqual(byMention._tag === "Found" ? byMention.member.username : undefined, "alice")
      const byName = yield* resolver.resolve(fake.guild.id, "@Boss")
      assert.isTrue(byName._tag === "Found" && byName.member.isAdministrator)
      const missing = yield* resolver.resolve(fake.guild.id, "nobody")
      assert.strictEqual(missing._tag, "NotFound")
    }))

  it.live("after the gateway drops (close 4000) the client resumes and keeps answering", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("still here") })
      fake.closeGateway(4000)
      yield* waitUntil(fake, "RESUME", () => fake.resumes > 0, 5000)
      fake.userSays(fake.channel, "are you there?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "reply after resume")
    }))

  it.live("a turn that fails (channel deleted mid-turn) is logged; the bot keeps answering elsewhere", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("hello") })
      const other = fake.addChannel({ kind: "text", name: "other" })
      fake.dispatch("CHANNEL_CREATE", { id: other.id, type: 0, guild_id: fake.guild.id, name: "other", position: 1, permission_overwrites: [] }, fake.guild.id)
      fake.userSays(fake.channel, "doomed", { mentionBot: true })
      fake.channel.deleted = true
      yield* Effect.sleep("200 millis")
      fake.userSays(other, "fine here", { mentionBot: true })
      yield* awaitBotMessages(fake, other.id, 1, "answer in the other channel")
    }))
})
