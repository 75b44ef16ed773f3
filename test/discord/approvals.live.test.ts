import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Ref } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { callTool, reply, type Script } from "../../src/provider/scripted/Script"
import { type FakeDiscord, type FakeInteraction, Permission, type StoredMessage, waitUntil } from "../support/fakeDiscord"
import { rawTool } from "../support/tools/testTools"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Tool approvals on Discord: `/approvals add`, then a call of the marked tool posts Approve /
 * Deny buttons in the channel (real discord.js client, fake Discord, scripted model).
 */

/** Calls send_mail, then answers with what the call returned. */
const mailScript: Script = (call) => {
  const last = call.request.functionHistory.at(-1)
  return last === undefined
    ? callTool("send_mail", { to: "bob@example.com" })
    : reply(`result: ${JSON.stringify(last.functionResponse.response.result)}`)
}

const admin = { permissions: Permission.ManageGuild }

const buttonsOf = (message: StoredMessage | undefined): ReadonlyArray<{ readonly custom_id: string; readonly label: string }> =>
  (message?.components ?? []).flatMap((row) => (row["components"] as ReadonlyArray<{ custom_id: string; label: string }> | undefined) ?? [])

const setUp = (timeoutMs = 20_000) =>
  Effect.gen(function*() {
    const runs = yield* Ref.make(0)
    const mail = rawTool({ name: "send_mail", execute: () => Effect.as(Ref.update(runs, (n) => n + 1), toolSuccess({ sent: true })) })
    const harness = yield* botHarness({ script: mailScript, tools: [mail], serverControls: { toolApprovalTimeout: Duration.millis(timeoutMs) } })
    const { fake } = harness
    const added = fake.slash("approvals", { subcommand: "add", options: { tool: "send_mail" }, ...admin })
    yield* waitUntil(fake, "/approvals add", () => added.original !== undefined)
    assert.include(added.original?.content ?? "", "waits for Approve / Deny")
    return { ...harness, runs }
  })

/** The question the bot posted (the message with buttons). */
const question = (fake: FakeDiscord) =>
  Effect.map(
    waitUntil(fake, "the approval question", () => fake.botMessages(fake.channel.id).some((message) => buttonsOf(message).length === 2)),
    () => {
      const message = fake.botMessages(fake.channel.id).find((candidate) => buttonsOf(candidate).length === 2)!
      return { message, buttons: buttonsOf(message), content: message.content, id: message.id }
    }
  )

/** Presses a button of the question as it was posted (a closed question has none left to find). */
const press = (fake: FakeDiscord, posted: { readonly message: StoredMessage; readonly buttons: ReturnType<typeof buttonsOf> }, label: "Approve" | "Deny", options: Parameters<FakeDiscord["pressButton"]>[2]): FakeInteraction => {
  const button = posted.buttons.find((candidate) => candidate.label === label)
  return fake.pressButton(posted.message, button?.custom_id ?? "", options)
}

describe("tool approvals on Discord", () => {
  it.live("only the member the reply is for (or Manage Server) can answer; approved, the tool runs and the question says so", () =>
    Effect.gen(function*() {
      const { fake, runs } = yield* setUp()
      const alice = fake.user("alice")
      fake.userSays(fake.channel, "mail bob", { mentionBot: true, author: alice })
      const asked = yield* question(fake)
      assert.include(asked.content, "send_mail")
      assert.include(asked.content, "bob@example.com")
      assert.include(asked.content, `<@${alice.id}>`)
      // Bob is not the one asked and cannot manage the server: privately refused, nothing runs.
      const byBob = press(fake, asked, "Approve", { user: fake.user("bob") })
      yield* waitUntil(fake, "bob's refusal", () => byBob.original !== undefined)
      assert.include(byBob.original?.content ?? "", "Only the member this reply is for")
      assert.strictEqual(Number((byBob.callbacks[0]?.["data"] as { flags?: number } | undefined)?.flags ?? 0) & 64, 64)
      assert.strictEqual(yield* Ref.get(runs), 0)
      press(fake, asked, "Approve", { user: alice })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the reply after the approval", (contents) => contents.includes(`result: {"sent":true}`))
      assert.strictEqual(yield* Ref.get(runs), 1)
      const closed = fake.message(asked.id)
      assert.include(closed?.content ?? "", "approved by")
      assert.lengthOf(closed?.components ?? [], 0)
    }), 30_000)

  it.live("a Manage Server member denies: the tool never runs and the model gets denied_by_user", () =>
    Effect.gen(function*() {
      const { fake, probe, runs } = yield* setUp()
      fake.userSays(fake.channel, "mail bob", { mentionBot: true })
      const asked = yield* question(fake)
      press(fake, asked, "Deny", { user: fake.user("moderator"), ...admin })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the reply after the denial", (contents) => contents.some((content) => content.includes("denied_by_user")))
      assert.strictEqual(yield* Ref.get(runs), 0)
      const replayed = (yield* probe.requests)[1]?.functionHistory[0]?.functionResponse.response.result as { status?: string }
      assert.strictEqual(replayed.status, "denied_by_user")
      assert.include(fake.message(asked.id)?.content ?? "", "denied by")
    }), 30_000)

  it.live("nobody answers: denied when TOOL_APPROVAL_TIMEOUT_MS runs out; a late press is told it expired", () =>
    Effect.gen(function*() {
      const { fake, runs } = yield* setUp(600)
      fake.userSays(fake.channel, "mail bob", { mentionBot: true })
      const asked = yield* question(fake)
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the reply after the timeout", (contents) => contents.some((content) => content.includes("denied_by_user")))
      assert.strictEqual(yield* Ref.get(runs), 0)
      assert.include(fake.message(asked.id)?.content ?? "", "Nobody answered")
      const late = press(fake, asked, "Approve", {})
      yield* waitUntil(fake, "the late press answered", () => late.original !== undefined)
      assert.include(late.original?.content ?? "", "no longer waiting")
    }), 30_000)

  it.live("/kill while the question waits stops the reply; the question says so", () =>
    Effect.gen(function*() {
      const { fake, runs } = yield* setUp()
      fake.userSays(fake.channel, "mail bob", { mentionBot: true })
      const asked = yield* question(fake)
      fake.slash("kill")
      yield* waitUntil(fake, "the question closed", () => (fake.message(asked.id)?.content ?? "").includes("stopped"))
      assert.lengthOf(fake.message(asked.id)?.components ?? [], 0)
      assert.strictEqual(yield* Ref.get(runs), 0)
    }), 30_000)

  it.live("/approvals: autocomplete offers the bot's tools; list and remove", () =>
    Effect.gen(function*() {
      const { fake } = yield* setUp()
      const typed = fake.autocomplete("approvals", "tool", { subcommand: "add", options: { tool: "mai" }, ...admin })
      yield* waitUntil(fake, "the autocomplete answer", () => fake.autocompleteChoices(typed) !== undefined)
      assert.deepStrictEqual(fake.autocompleteChoices(typed)?.map((choice) => choice.value), ["send_mail"])
      const both = fake.slash("approvals", { subcommand: "add", options: { tool: "x", mcp_server: "y" }, ...admin })
      yield* waitUntil(fake, "refused", () => both.original !== undefined)
      assert.include(both.original?.content ?? "", "either a tool or an MCP server")
      const server = fake.slash("approvals", { subcommand: "add", options: { mcp_server: "github" }, ...admin })
      yield* waitUntil(fake, "server rule", () => server.original !== undefined)
      const list = fake.slash("approvals", { subcommand: "list", ...admin })
      yield* waitUntil(fake, "list", () => list.original !== undefined)
      assert.include(list.original?.content ?? "", "`send_mail`")
      assert.include(list.original?.content ?? "", "`github`")
      const removed = fake.slash("approvals", { subcommand: "remove", options: { tool: "send_mail" }, ...admin })
      yield* waitUntil(fake, "remove", () => removed.original !== undefined)
      assert.include(removed.original?.content ?? "", "runs without approval again")
    }), 30_000)
})
