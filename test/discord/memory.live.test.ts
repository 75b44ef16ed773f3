import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { DiscordClient } from "../../src/discord/DiscordClient"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import * as Database from "../../src/store/Database"
import { DatabaseTarget } from "../../src/config/DatabaseUrl"
import { ShortTermMemoryStore } from "../../src/store/ShortTermMemoryStore"
import * as Stores from "../../src/store/Stores"
import { UPDATE_SHORT_TERM_MEMORY } from "../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { type FakeChannel, type FakeDiscord, Permission, waitUntil } from "../support/fakeDiscord"
import { migrateUpTo } from "../store/databases"
import { awaitBotMessages, botHarness } from "./botHarness"

const lastUser = (request: GenerationRequest) => [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

/** `remember X` writes X as the summary (saying "Noted."); anything else is answered with "ok". */
const script: S.Script = ({ request }) => {
  const text = lastUser(request)
  return text.startsWith("remember ") && request.functionHistory.length === 0
    ? S.callTool(UPDATE_SHORT_TERM_MEMORY, { summary: text.slice("remember ".length) }, "Noted.")
    : S.reply("ok")
}

/**
 * The stores over a database an earlier release left: version 1, with the guild's one memory
 * (`guild:<id>`) as it was kept before memory became per channel. Opening it runs the rest.
 */
const storesWithOldServerMemory = (fake: FakeDiscord) =>
  Stores.layerWithoutDatabase.pipe(
    Layer.provide(
      Layer.effectDiscard(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* migrateUpTo("1_initial_schema")
          yield* sql`INSERT INTO short_term_memory (scope_key, persona_key, memory, updated_at)
            VALUES (${`guild:${fake.guild.id}`}, '', ${JSON.stringify({ summary: "written before the upgrade" })}, 1)`
          yield* Database.migrate
        }).pipe(Effect.orDie)
      ).pipe(Layer.provideMerge(Database.sqlClientLayer(DatabaseTarget.SqliteMemory())))
    )
  )

describe("short-term memory on Discord (decision 16)", () => {
  it.live("a memory stays in its channel and its threads; server_wide_memory shares one, starting from the migrated per-server memory", () =>
    Effect.gen(function*() {
      const { fake, probe, context } = yield* botHarness({ script, shortTermMemory: true, stores: storesWithOldServerMemory })
      const client = yield* Effect.provide(DiscordClient, context)
      const moderators = fake.addChannel({ kind: "text", name: "moderators" })
      fake.dispatch("CHANNEL_CREATE", { id: moderators.id, type: 0, guild_id: fake.guild.id, name: "moderators", position: 1, permission_overwrites: [] }, fake.guild.id)
      const caseThread = fake.addThread(moderators, "case-1")
      yield* waitUntil(fake, "channel and thread cached", () => client.channels.cache.has(moderators.id) && client.channels.cache.has(caseThread.id))

      // The tool writes a memory after "Noted." shows; a turn of another queue (another channel)
      // may start before that, so the test waits for the write itself.
      const memories = yield* Effect.provide(ShortTermMemoryStore, context)
      const written = (scope: Parameters<typeof memories.get>[0], summary: string) =>
        Effect.repeat(memories.get(scope, undefined).pipe(Effect.orDie), {
          until: (memory) => memory["summary"] === summary,
          schedule: Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "5 seconds" }))
        })

      /** The user mentions the bot in `channel`; resolves with the memory block the model was shown. */
      const say = (channel: FakeChannel, text: string) =>
        Effect.gen(function*() {
          const before = fake.botMessages(channel.id).length
          fake.userSays(channel, text, { mentionBot: true })
          yield* awaitBotMessages(fake, channel.id, before + 1, `the answer to "${text}"`, undefined, 10_000)
          const requests = yield* probe.requests
          const request = requests.find((candidate) => lastUser(candidate) === text)
          assert.isDefined(request, `a request answered "${text}"`)
          return request?.messages.find((item) => item.role === "system" && item.content.includes("short-term memory"))?.content ?? ""
        })

      yield* say(moderators, "remember the moderators will ban user X")
      const inGeneral = yield* say(fake.channel, "what is new?")
      assert.notInclude(inGeneral, "ban user X", "#general does not see #moderators' memory")
      assert.notInclude(inGeneral, "written before the upgrade", "the old per-server memory is no channel's")
      assert.include(yield* say(caseThread, "anything on this case?"), "summary: the moderators will ban user X", "a thread reads its channel's")
      yield* say(caseThread, "remember the thread decided: warning first")
      yield* written({ kind: "channel", guildId: fake.guild.id, channelId: moderators.id }, "the thread decided: warning first")
      assert.include(yield* say(moderators, "status?"), "summary: the thread decided: warning first", "a thread writes its channel's")
      assert.notInclude(yield* say(fake.channel, "and now?"), "warning first")

      const manage = fake.slash("capabilities", {
        subcommand: "manage",
        options: { capability: "server_wide_memory", enabled: true },
        permissions: Permission.ManageGuild
      })
      yield* waitUntil(fake, "/capabilities answer", () => manage.original !== undefined)
      assert.include(manage.original?.content ?? "", "`server_wide_memory` is now **on**")
      const shared = yield* say(fake.channel, "what do you remember?")
      assert.include(shared, "summary: written before the upgrade", "the migrated memory is the server-wide one")
      assert.notInclude(shared, "warning first")
      yield* say(moderators, "remember the raid is on Friday")
      yield* written({ kind: "server", guildId: fake.guild.id }, "the raid is on Friday")
      assert.include(yield* say(fake.channel, "when is the raid?"), "summary: the raid is on Friday", "written in one channel, shown in another")
      assert.include(yield* say(caseThread, "and here?"), "summary: the raid is on Friday")
    }))
})
