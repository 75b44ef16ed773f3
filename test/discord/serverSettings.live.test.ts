import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { reply } from "../../src/provider/scripted/Script"
import { SecretBox } from "../../src/store/SecretBox"
import * as Stores from "../../src/store/Stores"
import { type FakeDiscord, type FakeInteraction, Permission, waitUntil } from "../support/fakeDiscord"
import { postgres, sqliteFile } from "../store/databases"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * A server configures its own bot from Discord alone: `/model`, `/persona`, `/triggers`,
 * `/access`, `/settings` on the fake Discord with the real discord.js client and real stores.
 */

const answerOf = (fake: FakeDiscord, interaction: FakeInteraction, what: string) =>
  Effect.map(waitUntil(fake, what, () => interaction.original !== undefined && interaction.original.history.length > 0 && (interaction.original.content !== "" || interaction.original.embeds.length > 0)), () => interaction.original?.content ?? "")

const embedText = (interaction: FakeInteraction) => JSON.stringify(interaction.original?.embeds ?? [])

const admin = { permissions: Permission.ManageGuild }

const models = ["model-a", "model-b", "model-c"]

describe("server settings from Discord (real discord.js, fake Discord, scripted model)", () => {
  it.live("every settings command refuses a member without Manage Server, whatever Discord's defaults say", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("ok"), routePlan: { models } })
      const member = fake.user("member")
      const commands: ReadonlyArray<readonly [string, string | undefined, Record<string, string | number | boolean>]> = [
        ["model", "set", { models: "model-b" }],
        ["model", "reset", {}],
        ["persona", "set", { name: "Evil" }],
        ["triggers", "set", { mentions: false }],
        ["access", "rate", { messages_per_minute: 1 }],
        ["approvals", "add", { tool: "send_mail" }],
        ["settings", undefined, {}]
      ]
      for (const [name, subcommand, options] of commands) {
        const interaction = fake.slash(name, { user: member, options, ...(subcommand === undefined ? {} : { subcommand }) })
        const answer = yield* answerOf(fake, interaction, `/${name} refused`)
        assert.include(answer, "Manage Server", `/${name}`)
      }
      // Nothing was stored: the settings are the defaults.
      const shown = fake.slash("settings", admin)
      yield* answerOf(fake, shown, "/settings")
      assert.include(embedText(shown), "model-a")
      assert.include(embedText(shown), "the bot's default")
      assert.notInclude(embedText(shown), "Evil")
      assert.include(embedText(shown), "No tool waits for approval")
    }), 30_000)

  it.live("/model: autocomplete offers the allowed models; a model not allowed is refused; the server's and a channel's chain reach the provider", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), routePlan: { models: ["model-a"] }, allowedModels: ["model-b", "model-c"] })
      const typed = fake.autocomplete("model", "models", { subcommand: "set", options: { models: "model-a, mod" }, ...admin })
      yield* waitUntil(fake, "the autocomplete answer", () => fake.autocompleteChoices(typed) !== undefined)
      assert.deepStrictEqual(fake.autocompleteChoices(typed)?.map((choice) => choice.value), ["model-a, model-b", "model-a, model-c"])

      const refused = yield* answerOf(fake, fake.slash("model", { subcommand: "set", options: { models: "gpt-unlisted" }, ...admin }), "/model refused")
      assert.include(refused, "Not an allowed model")
      assert.include(yield* answerOf(fake, fake.slash("model", { subcommand: "set", options: { models: "model-b, model-a" }, ...admin }), "/model set"), "model-b")

      // /tools names the model a turn here starts on.
      assert.include(yield* answerOf(fake, fake.slash("tools", {}), "/tools"), "**model-b**")
      fake.userSays(fake.channel, "which model?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer")
      assert.strictEqual((yield* probe.requests).at(-1)?.model, "model-b")

      // A channel's choice wins in that channel only.
      const other = fake.addChannel({ kind: "text", name: "other" })
      yield* answerOf(fake, fake.slash("model", { subcommand: "set", options: { models: "model-c", channel: true }, channel: other, ...admin }), "/model set channel")
      fake.userSays(other, "and here?", { mentionBot: true })
      yield* awaitBotMessages(fake, other.id, 1, "the answer in #other")
      assert.strictEqual((yield* probe.requests).at(-1)?.model, "model-c")
      fake.userSays(fake.channel, "and back here?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the second answer")
      assert.strictEqual((yield* probe.requests).at(-1)?.model, "model-b")

      const shown = yield* answerOf(fake, fake.slash("model", { subcommand: "show", channel: other, ...admin }), "/model show")
      assert.include(shown, "this channel's choice")
      // reset: the bot's default everywhere, channel choices included.
      assert.include(yield* answerOf(fake, fake.slash("model", { subcommand: "reset", ...admin }), "/model reset"), "1 channel choice cleared")
      fake.userSays(other, "now?", { mentionBot: true })
      yield* awaitBotMessages(fake, other.id, 2, "the answer after reset")
      assert.strictEqual((yield* probe.requests).at(-1)?.model, "model-a")
    }), 30_000)

  it.live("/persona: a named persona answers through the channel webhook with its prompt; /persona reset brings the bot back; another server keeps the bot", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("hello"), routePlan: { models } })
      const badAvatar = yield* answerOf(fake, fake.slash("persona", { subcommand: "set", options: { avatar: "http://insecure.example/a.png" }, ...admin }), "/persona bad avatar")
      assert.include(badAvatar, "https://")
      const tooLong = yield* answerOf(fake, fake.slash("persona", { subcommand: "set", options: { prompt: "x".repeat(4001) }, ...admin }), "/persona long prompt")
      assert.include(tooLong, "4000")
      const set = fake.slash("persona", {
        subcommand: "set",
        options: { name: "Nerine", avatar: "https://cdn.example/nerine.png", prompt: "You are Nerine, a gardener." },
        ...admin
      })
      assert.include(yield* answerOf(fake, set, "/persona set"), "Nerine")

      fake.userSays(fake.channel, "hi", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the persona's answer")
      const [answer] = fake.botMessages(fake.channel.id)
      assert.isDefined(answer?.webhookId)
      assert.strictEqual(answer?.author.username, "Nerine")
      const executed = fake.requestsTo("POST", /^\/webhooks\//).at(-1)
      assert.strictEqual(executed?.body?.["avatar_url"], "https://cdn.example/nerine.png")
      assert.strictEqual((yield* probe.requests).at(-1)?.system, "You are Nerine, a gardener.")

      // A reply to the persona's message is a reply to the bot.
      fake.userSays(fake.channel, "tell me more", { replyTo: answer?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the answer to the reply")

      // Another server never sees this one's persona.
      const elsewhere = fake.addGuild("Other Guild")
      const otherChannel = fake.addChannel({ kind: "text", name: "lobby", guildId: elsewhere.id })
      fake.userSays(otherChannel, "hi there", { mentionBot: true })
      yield* awaitBotMessages(fake, otherChannel.id, 1, "the bot's own answer elsewhere")
      assert.isUndefined(fake.botMessages(otherChannel.id)[0]?.webhookId)
      assert.notStrictEqual((yield* probe.requests).at(-1)?.system, "You are Nerine, a gardener.")

      assert.include(yield* answerOf(fake, fake.slash("persona", { subcommand: "reset", ...admin }), "/persona reset"), "own persona")
      fake.userSays(fake.channel, "still Nerine?", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "the bot's answer after reset")
      assert.isUndefined(fake.botMessages(fake.channel.id)[2]?.webhookId)
    }), 30_000)

  it.live("/triggers and /access: turned-off triggers, denied users and roles and the role allow list are not answered, at no model call", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), routePlan: { models } })
      // The text of the message each turn answered (a reply's quote annotation left out).
      const lastContents = () => Effect.map(probe.requests, (requests) => requests.map((request) => request.messages.at(-1)?.content.split("\n").at(-1)))
      fake.userSays(fake.channel, "mention answered", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the first answer")
      const [first] = fake.botMessages(fake.channel.id)
      yield* answerOf(fake, fake.slash("triggers", { subcommand: "set", options: { replies: false }, ...admin }), "/triggers replies off")
      fake.userSays(fake.channel, "a reply, ignored", { replyTo: first?.id ?? "" })
      yield* answerOf(fake, fake.slash("triggers", { subcommand: "set", options: { mentions: false, replies: true }, ...admin }), "/triggers mentions off")
      fake.userSays(fake.channel, "a mention, ignored", { mentionBot: true })
      fake.userSays(fake.channel, "a reply, answered", { replyTo: first?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the answer to the reply")
      assert.deepStrictEqual(yield* lastContents(), ["mention answered", "a reply, answered"])
      yield* answerOf(fake, fake.slash("triggers", { subcommand: "set", options: { mentions: true }, ...admin }), "/triggers mentions on")

      const mallory = fake.user("mallory")
      yield* answerOf(fake, fake.slash("access", { subcommand: "add", options: { list: "denied_users", user: { user: mallory } }, ...admin }), "/access deny user")
      const muted = fake.addRole("Muted")
      const vip = fake.addRole("VIP")
      const bob = fake.user("bob")
      fake.giveRole(bob, muted)
      yield* answerOf(fake, fake.slash("access", { subcommand: "add", options: { list: "denied_roles", role: { role: muted } }, ...admin }), "/access deny role")
      fake.userSays(fake.channel, "from mallory", { mentionBot: true, author: mallory })
      fake.userSays(fake.channel, "from bob", { mentionBot: true, author: bob })
      const carol = fake.user("carol")
      fake.userSays(fake.channel, "from carol", { mentionBot: true, author: carol })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "carol's answer")
      assert.deepStrictEqual((yield* lastContents()).slice(2), ["from carol"])

      // An allow list: only VIPs now.
      yield* answerOf(fake, fake.slash("access", { subcommand: "add", options: { list: "allowed_roles", role: { role: vip } }, ...admin }), "/access allow role")
      const dave = fake.user("dave")
      fake.giveRole(dave, vip)
      fake.userSays(fake.channel, "carol again", { mentionBot: true, author: carol })
      fake.userSays(fake.channel, "dave the vip", { mentionBot: true, author: dave })
      yield* awaitBotMessages(fake, fake.channel.id, 4, "dave's answer")
      assert.deepStrictEqual((yield* lastContents()).slice(2), ["from carol", "dave the vip"])
      const missing = yield* answerOf(fake, fake.slash("access", { subcommand: "add", options: { list: "denied_roles" }, ...admin }), "/access without a role")
      assert.include(missing, "Name the role")
      const shown = yield* answerOf(fake, fake.slash("access", { subcommand: "show", ...admin }), "/access show")
      assert.include(shown, `<@&${vip.id}>`)
      assert.include(shown, `<@${mallory.id}>`)
    }), 30_000)

  it.live("DISCORD_ALLOW_DMS=false: direct messages are not answered (the operator's choice), mentions still are", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), routePlan: { models }, serverControls: { allowDms: false } })
      const carol = fake.user("carol")
      const dm = fake.dmChannel(carol)
      fake.userSays(dm, "hello in private", { author: carol })
      fake.userSays(fake.channel, "hello in public", { mentionBot: true, author: carol })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the public answer")
      yield* Effect.sleep("200 millis")
      assert.lengthOf(fake.botMessages(dm.id), 0)
      assert.deepStrictEqual((yield* probe.requests).map((request) => request.messages.at(-1)?.content), ["hello in public"])
    }), 30_000)

  it.live("/access rate: messages beyond the rate cost no model call and the user is told once, by a notice that deletes itself", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), routePlan: { models }, front: { rateNoticeLifetime: "300 millis" } })
      yield* answerOf(fake, fake.slash("access", { subcommand: "rate", options: { messages_per_minute: 2 }, ...admin }), "/access rate")
      const eve = fake.user("eve")
      for (const text of ["one", "two", "three", "four", "five"]) fake.userSays(fake.channel, text, { mentionBot: true, author: eve })
      yield* waitUntil(fake, "two answers and one notice", () => fake.botMessages(fake.channel.id).length >= 3)
      yield* Effect.sleep("150 millis")
      const notices = fake.botMessages(fake.channel.id).filter((message) => message.content.includes("faster than this server allows"))
      assert.lengthOf(notices, 1)
      assert.include(notices[0]?.content ?? "", "2 per minute")
      assert.strictEqual(fake.requestsTo("POST", /\/messages$/).filter((request) => String(request.body?.["content"] ?? "").includes("faster")).length, 1)
      yield* waitUntil(fake, "the notice deleted", () => fake.message(notices[0]?.id ?? "")?.deleted === true)
      // Another user is not held back by eve's rate.
      fake.userSays(fake.channel, "from frank", { mentionBot: true, author: fake.user("frank") })
      yield* waitUntil(fake, "frank's answer", () => fake.botMessages(fake.channel.id).filter((message) => message.content === "ok").length === 3)
      assert.strictEqual((yield* probe.requests).length, 3)
    }), 30_000)
})

for (const database of [sqliteFile, postgres]) {
  describe(`server settings across a restart on ${database.name}`, () => {
    it.live("set by commands, kept by the database: after a restart /settings shows them and the next turn runs on them; another server has none of them", () =>
      Effect.gen(function*() {
        const target = yield* database.target
        const stores = () => Stores.layer(target, SecretBox.unkeyed)
        const guildId = "987654321098765432"
        yield* Effect.scoped(Effect.gen(function*() {
          const { fake } = yield* botHarness({ script: () => reply("ok"), routePlan: { models }, stores: stores(), fake: { guildId } })
          yield* answerOf(fake, fake.slash("model", { subcommand: "set", options: { models: "model-c" }, ...admin }), "/model set")
          yield* answerOf(fake, fake.slash("persona", { subcommand: "set", options: { prompt: "Speak like a pirate." }, ...admin }), "/persona set")
          yield* answerOf(fake, fake.slash("access", { subcommand: "rate", options: { messages_per_minute: 7 }, ...admin }), "/access rate")
          yield* answerOf(fake, fake.slash("approvals", { subcommand: "add", options: { tool: "send_mail" }, ...admin }), "/approvals add")
          yield* answerOf(fake, fake.slash("triggers", { subcommand: "set", options: { replies: false }, ...admin }), "/triggers set")
        }))
        // A new process (a new bot, a new Discord connection) over the same database.
        const { fake, probe } = yield* botHarness({ script: () => reply("ok"), routePlan: { models }, stores: stores(), fake: { guildId } })
        const shown = fake.slash("settings", admin)
        yield* answerOf(fake, shown, "/settings after the restart")
        const embed = embedText(shown)
        for (const expected of ["model-c", "this server's choice", "Speak like a pirate.", "7 messages per minute", "send_mail", "Replies to the bot: **off**"]) {
          assert.include(embed, expected)
        }
        fake.userSays(fake.channel, "hello", { mentionBot: true })
        yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer")
        assert.strictEqual((yield* probe.requests)[0]?.model, "model-c")
        assert.strictEqual((yield* probe.requests)[0]?.system, "Speak like a pirate.")
        // Another server on the same bot: the defaults.
        const elsewhere = fake.addGuild("Other Guild")
        const lobby = fake.addChannel({ kind: "text", name: "lobby", guildId: elsewhere.id })
        fake.userSays(lobby, "hello there", { mentionBot: true })
        yield* awaitBotMessages(fake, lobby.id, 1, "the answer elsewhere")
        assert.strictEqual((yield* probe.requests)[1]?.model, "model-a")
        assert.notStrictEqual((yield* probe.requests)[1]?.system, "Speak like a pirate.")
      }), 60_000)
  })
}
