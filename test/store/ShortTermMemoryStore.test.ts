import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Database from "../../src/store/Database"
import { type MemoryPlace, memoryScopeOf, ShortTermMemoryStore } from "../../src/store/ShortTermMemoryStore"
import * as Stores from "../../src/store/Stores"
import { migrateUpTo, testDatabases } from "./databases"
import { storesOn } from "./stores"

const inGuild = (channelId: string, parentChannelId?: string): MemoryPlace => ({ guildId: "g1", channelId, parentChannelId, userId: "u1" })
const general = memoryScopeOf(inGuild("general"), false)
const moderators = memoryScopeOf(inGuild("moderators"), false)
const threadOfGeneral = memoryScopeOf(inGuild("thread-1", "general"), false)
const server = memoryScopeOf(inGuild("general"), true)
const otherGuild = memoryScopeOf({ guildId: "g2", channelId: "general", parentChannelId: undefined, userId: "u1" }, false)
const dm = memoryScopeOf({ guildId: undefined, channelId: "dm-u1", parentChannelId: undefined, userId: "u1" }, false)

describe("memoryScopeOf", () => {
  it("a guild channel has its own memory, a thread its parent's, the server one with server_wide_memory, a DM its user's", () => {
    assert.deepStrictEqual(general, { kind: "channel", guildId: "g1", channelId: "general" })
    assert.deepStrictEqual(threadOfGeneral, general)
    assert.deepStrictEqual(server, { kind: "server", guildId: "g1" })
    assert.deepStrictEqual(memoryScopeOf(inGuild("thread-1", "general"), true), server)
    assert.deepStrictEqual(dm, { kind: "dm", userId: "u1" })
    // A DM stays the DM's whatever the flag says.
    assert.deepStrictEqual(memoryScopeOf({ guildId: undefined, channelId: "dm-u1", parentChannelId: undefined, userId: "u1" }, true), dm)
  })
})

for (const database of testDatabases) {
  describe(`ShortTermMemoryStore on ${database.name}`, () => {
    it.effect("an unwritten scope reads as an empty map", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        assert.deepStrictEqual(yield* store.get(general, undefined), {})
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("replace swaps the whole category map (categories left out are dropped)", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        yield* store.replace(general, "p1", { summary: "talked about cats", scene_state: "kitchen" })
        assert.deepStrictEqual(yield* store.get(general, "p1"), { summary: "talked about cats", scene_state: "kitchen" })
        yield* store.replace(general, "p1", { scene_state: "bedroom — 寝室 \"quoted\"" })
        assert.deepStrictEqual(yield* store.get(general, "p1"), { scene_state: "bedroom — 寝室 \"quoted\"" })
        yield* store.replace(general, "p1", {})
        assert.deepStrictEqual(yield* store.get(general, "p1"), {})
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("maps are separate per channel, for the server, per guild, per DM user and per persona", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        yield* store.replace(moderators, undefined, { summary: "ban the spammer quietly" })
        yield* store.replace(general, undefined, { summary: "general default persona" })
        yield* store.replace(general, "p1", { summary: "general persona p1" })
        yield* store.replace(server, undefined, { summary: "the whole server" })
        yield* store.replace(dm, undefined, { summary: "dm" })
        assert.deepStrictEqual(yield* store.get(moderators, undefined), { summary: "ban the spammer quietly" })
        assert.deepStrictEqual(yield* store.get(general, undefined), { summary: "general default persona" })
        assert.deepStrictEqual(yield* store.get(threadOfGeneral, undefined), { summary: "general default persona" })
        assert.deepStrictEqual(yield* store.get(general, "p1"), { summary: "general persona p1" })
        assert.deepStrictEqual(yield* store.get(server, undefined), { summary: "the whole server" })
        assert.deepStrictEqual(yield* store.get(dm, undefined), { summary: "dm" })
        assert.deepStrictEqual(yield* store.get(otherGuild, undefined), {})
        assert.deepStrictEqual(yield* store.get(memoryScopeOf({ guildId: undefined, channelId: "dm-u2", parentChannelId: undefined, userId: "u2" }, false), undefined), {})
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("migration 2_channel_memory: a guild's per-server memory becomes its server-wide memory, no channel's; DMs keep theirs", () =>
      Effect.gen(function* () {
        const client = yield* Layer.build(Database.sqlClientLayer(yield* database.target))
        const check = Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* migrateUpTo("1_initial_schema")
          // What version 1 wrote: one memory per guild (`guild:<id>`), per persona; one per DM user.
          yield* sql`INSERT INTO short_term_memory (scope_key, persona_key, memory, updated_at) VALUES
            ('guild:g1', '', ${JSON.stringify({ summary: "old g1 memory" })}, 1),
            ('guild:g1', 'p1', ${JSON.stringify({ summary: "old g1 memory of p1" })}, 1),
            ('guild:g2', '', ${JSON.stringify({ scene_state: "old g2 scene" })}, 1),
            ('dm:u1', '', ${JSON.stringify({ summary: "old dm" })}, 1)`
          const applied = yield* Database.migrate
          assert.deepStrictEqual(applied.map(([id, name]) => `${id}_${name}`).slice(0, 1), ["2_channel_memory"])
          const store = yield* Effect.provide(ShortTermMemoryStore, Stores.layerWithoutDatabase)
          assert.deepStrictEqual(yield* store.get(server, undefined), { summary: "old g1 memory" })
          assert.deepStrictEqual(yield* store.get(server, "p1"), { summary: "old g1 memory of p1" })
          assert.deepStrictEqual(yield* store.get(memoryScopeOf({ ...inGuild("general"), guildId: "g2" }, true), undefined), { scene_state: "old g2 scene" })
          assert.deepStrictEqual(yield* store.get(dm, undefined), { summary: "old dm" })
          // No channel inherits it: the privacy fix applies to what was written before, too.
          assert.deepStrictEqual(yield* store.get(general, undefined), {})
          assert.deepStrictEqual(yield* store.get(moderators, "p1"), {})
          const keys = yield* sql`SELECT scope_key FROM short_term_memory ORDER BY scope_key, persona_key`
          assert.deepStrictEqual(keys.map((row) => row["scope_key"]), ["dm:u1", "server:g1", "server:g1", "server:g2"])
        })
        yield* Effect.provide(check, client)
      })
    )
  })
}
