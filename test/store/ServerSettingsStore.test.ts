import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SecretBox } from "../../src/store/SecretBox"
import { defaultServerSettings, ServerLimits, ServerSettingsStore } from "../../src/store/ServerSettingsStore"
import * as Stores from "../../src/store/Stores"
import { postgres, sqliteFile, testDatabases } from "./databases"
import { storesOn } from "./stores"

const G1 = "100000000000000001"
const G2 = "100000000000000002"
const ROLE = "200000000000000001"
const USER = "300000000000000001"
const CHANNEL = "400000000000000001"
const THREAD = "400000000000000002"

for (const database of testDatabases) {
  describe(`ServerSettingsStore on ${database.name}`, () => {
    it.effect("defaults until set; every setting is the server's own", () =>
      Effect.gen(function*() {
        const store = yield* ServerSettingsStore
        assert.deepStrictEqual(yield* store.get(G1), defaultServerSettings)
        yield* store.setModels(G1, ["model-b", "model-a"], "admin")
        yield* store.setPersona(G1, { name: "Nerine", avatarUrl: "https://cdn.example/n.png", systemPrompt: "You are Nerine." }, "admin")
        yield* store.setTriggers(G1, { mentions: true, replies: false, channels: false }, "admin")
        yield* store.setUserRate(G1, 6, "admin")
        assert.strictEqual(yield* store.addAccess(G1, "allowed_roles", ROLE, "admin"), "added")
        assert.strictEqual(yield* store.addAccess(G1, "allowed_roles", ROLE, "admin"), "already_there")
        assert.strictEqual(yield* store.addAccess(G1, "denied_users", USER, "admin"), "added")
        const settings = yield* store.get(G1)
        assert.deepStrictEqual(settings, {
          models: ["model-b", "model-a"],
          persona: { name: "Nerine", avatarUrl: "https://cdn.example/n.png", systemPrompt: "You are Nerine." },
          triggers: { mentions: true, replies: false, channels: false },
          access: { allowedRoles: [ROLE], deniedRoles: [], deniedUsers: [USER], userMessagesPerMinute: 6 }
        })
        // Another server sees nothing of it.
        assert.deepStrictEqual(yield* store.get(G2), defaultServerSettings)
        // Setting one thing keeps the others.
        yield* store.setModels(G1, undefined, "admin")
        assert.deepStrictEqual(yield* store.get(G1), { ...settings, models: undefined })
        assert.isTrue(yield* store.removeAccess(G1, "allowed_roles", ROLE))
        assert.isFalse(yield* store.removeAccess(G1, "allowed_roles", ROLE))
        assert.deepStrictEqual((yield* store.get(G1)).access.allowedRoles, [])
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("channel overrides: a thread, then its channel; cleared one by one or all at once; per server", () =>
      Effect.gen(function*() {
        const store = yield* ServerSettingsStore
        assert.isUndefined(yield* store.channelModels(G1, [THREAD, CHANNEL]))
        assert.strictEqual(yield* store.setChannelModels(G1, CHANNEL, ["model-c"], "admin"), "set")
        assert.deepStrictEqual(yield* store.channelModels(G1, [THREAD, CHANNEL]), ["model-c"])
        assert.strictEqual(yield* store.setChannelModels(G1, THREAD, ["model-d"], "admin"), "set")
        assert.deepStrictEqual(yield* store.channelModels(G1, [THREAD, CHANNEL]), ["model-d"])
        assert.strictEqual(yield* store.setChannelModels(G1, THREAD, ["model-e"], "admin"), "set")
        assert.deepStrictEqual(yield* store.channelModels(G1, [THREAD]), ["model-e"])
        assert.isUndefined(yield* store.channelModels(G2, [THREAD, CHANNEL]))
        assert.strictEqual(yield* store.setChannelModels(G1, THREAD, undefined, "admin"), "cleared")
        assert.deepStrictEqual(yield* store.channelModels(G1, [THREAD, CHANNEL]), ["model-c"])
        assert.strictEqual(yield* store.clearChannelModels(G1), 1)
        assert.isUndefined(yield* store.channelModels(G1, [CHANNEL]))
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("every list is bounded: past its limit an add is refused, not stored", () =>
      Effect.gen(function*() {
        const store = yield* ServerSettingsStore
        for (let index = 0; index < ServerLimits.accessEntries; index++) {
          assert.strictEqual(yield* store.addAccess(G1, "denied_users", String(500_000_000_000_000_000n + BigInt(index)), "admin"), "added")
        }
        assert.strictEqual(yield* store.addAccess(G1, "denied_users", USER, "admin"), "full")
        assert.lengthOf((yield* store.get(G1)).access.deniedUsers, ServerLimits.accessEntries)
        // Another list of the same server, and another server, are not full.
        assert.strictEqual(yield* store.addAccess(G1, "denied_roles", ROLE, "admin"), "added")
        assert.strictEqual(yield* store.addAccess(G2, "denied_users", USER, "admin"), "added")
        for (let index = 0; index < ServerLimits.approvalRules; index++) {
          assert.strictEqual(yield* store.addApprovalRule(G1, { kind: "tool", name: `tool_${index}` }, "admin"), "added")
        }
        assert.strictEqual(yield* store.addApprovalRule(G1, { kind: "mcp_server", name: "github" }, "admin"), "full")
        assert.lengthOf(yield* store.approvalRules(G1), ServerLimits.approvalRules)
        // Bad input never reaches the database.
        const tooLong = yield* Effect.flip(store.setPersona(G1, { name: undefined, avatarUrl: undefined, systemPrompt: "x".repeat(ServerLimits.personaPrompt + 1) }, "admin"))
        assert.strictEqual(tooLong.reason, "invalid_input")
        assert.strictEqual((yield* Effect.flip(store.setUserRate(G1, ServerLimits.messagesPerMinute + 1, "admin"))).reason, "invalid_input")
        assert.strictEqual((yield* Effect.flip(store.addAccess(G1, "denied_users", "'; DROP TABLE x; --", "admin"))).reason, "invalid_input")
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("approval rules: by tool name or MCP server, case-insensitive, removed exactly", () =>
      Effect.gen(function*() {
        const store = yield* ServerSettingsStore
        assert.strictEqual(yield* store.addApprovalRule(G1, { kind: "tool", name: "send_mail" }, "admin"), "added")
        assert.strictEqual(yield* store.addApprovalRule(G1, { kind: "tool", name: "SEND_MAIL" }, "admin"), "already_there")
        assert.strictEqual(yield* store.addApprovalRule(G1, { kind: "mcp_server", name: "GitHub" }, "admin"), "added")
        assert.deepStrictEqual(yield* store.approvalRules(G1), [{ kind: "tool", name: "send_mail" }, { kind: "mcp_server", name: "GitHub" }])
        assert.deepStrictEqual(yield* store.approvalRules(G2), [])
        assert.isFalse(yield* store.removeApprovalRule(G1, { kind: "tool", name: "github" }))
        assert.isTrue(yield* store.removeApprovalRule(G1, { kind: "mcp_server", name: "github" }))
        assert.deepStrictEqual(yield* store.approvalRules(G1), [{ kind: "tool", name: "send_mail" }])
      }).pipe(Effect.provide(storesOn(database))))
  })
}

for (const database of [sqliteFile, postgres]) {
  describe(`ServerSettingsStore across a restart on ${database.name}`, () => {
    it.effect("what one process stored, the next one reads", () =>
      Effect.gen(function*() {
        const target = yield* database.target
        const open = Stores.layer(target, SecretBox.unkeyed)
        yield* Effect.gen(function*() {
          const store = yield* ServerSettingsStore
          yield* store.setModels(G1, ["model-b"], "admin")
          yield* store.setChannelModels(G1, CHANNEL, ["model-c"], "admin")
          yield* store.setPersona(G1, { name: "Nerine", avatarUrl: undefined, systemPrompt: "Be brief." }, "admin")
          yield* store.addAccess(G1, "denied_roles", ROLE, "admin")
          yield* store.addApprovalRule(G1, { kind: "tool", name: "send_mail" }, "admin")
        }).pipe(Effect.provide(open))
        const reopened = yield* Effect.gen(function*() {
          const store = yield* ServerSettingsStore
          return [yield* store.get(G1), yield* store.channelModels(G1, [CHANNEL]), yield* store.approvalRules(G1)] as const
        }).pipe(Effect.provide(Layer.fresh(open)))
        assert.deepStrictEqual(reopened[0].models, ["model-b"])
        assert.deepStrictEqual(reopened[0].persona, { name: "Nerine", avatarUrl: undefined, systemPrompt: "Be brief." })
        assert.deepStrictEqual(reopened[0].access.deniedRoles, [ROLE])
        assert.deepStrictEqual(reopened[1], ["model-c"])
        assert.deepStrictEqual(reopened[2], [{ kind: "tool", name: "send_mail" }])
      }), 30_000)
  })
}
