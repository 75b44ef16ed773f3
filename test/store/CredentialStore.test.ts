import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Layer, Redacted } from "effect"
import { CredentialStore, type StoredKey, validateApiKey } from "../../src/store/CredentialStore"
import type * as Database from "../../src/store/Database"
import { SecretBox } from "../../src/store/SecretBox"
import * as Stores from "../../src/store/Stores"
import { migratedLayer, type TestDatabase, testDatabases } from "./databases"
import { makeLogCapture } from "../support/tools/logCapture"
import { storesOn, testSecretKey } from "./stores"

const oldKey = new Uint8Array(32).fill(3)
const newKey = new Uint8Array(32).fill(4)
const alice = { kind: "user", id: "u-alice" } as const
const guild = { kind: "guild", id: "g1" } as const

const usable = (stored: StoredKey): string => {
  assert.strictEqual(stored._tag, "Usable")
  return stored._tag === "Usable" ? Redacted.value(stored.key) : ""
}

const rawKeys = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT owner_kind, owner_id, sealed_key FROM credential_keys ORDER BY owner_kind`)

/**
 * One database, opened by successive "processes" with different SecretBoxes: the same migrated
 * database kept open for the test, the stores rebuilt over it per box.
 */
const withSharedDatabase = (database: TestDatabase) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const context = yield* Layer.buildWithScope(migratedLayer(database), scope)
    const sql = Layer.succeedContext(context)
    const storesWith = (secrets: Layer.Layer<SecretBox>): Layer.Layer<Stores.Stores | SqlClient.SqlClient, Database.DatabaseError> =>
      Layer.merge(Stores.layerOnClient.pipe(Layer.provide(Layer.merge(sql, secrets))), sql)
    return storesWith
  })

for (const database of testDatabases) {
  describe(`CredentialStore on ${database.name}`, () => {
    it.effect("a key is stored sealed, read back, replaced and cleared; users and servers are apart", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        assert.strictEqual((yield* store.getKey(alice))._tag, "None")
        yield* store.setKey(alice, "  sk-alice-0123456789  ", alice.id)
        yield* store.setKey(guild, "sk-server-abcdefghij", "u-admin")
        assert.strictEqual(usable(yield* store.getKey(alice)), "sk-alice-0123456789", "trimmed")
        assert.strictEqual(usable(yield* store.getKey(guild)), "sk-server-abcdefghij")
        const stored = yield* store.getKey(guild)
        assert.strictEqual(stored._tag === "Usable" ? stored.setBy : "", "u-admin")
        const rows = yield* rawKeys
        assert.strictEqual(rows.length, 2)
        for (const row of rows) {
          assert.match(String(row["sealed_key"]), /^lcs1\./)
          assert.notInclude(String(row["sealed_key"]), "sk-")
        }
        yield* store.setKey(alice, "sk-alice-replaced-99", alice.id)
        assert.strictEqual(usable(yield* store.getKey(alice)), "sk-alice-replaced-99")
        assert.isTrue(yield* store.clearKey(alice))
        assert.isFalse(yield* store.clearKey(alice))
        assert.strictEqual((yield* store.getKey(alice))._tag, "None")
        assert.strictEqual(usable(yield* store.getKey(guild)), "sk-server-abcdefghij")
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("malformed keys are refused before storage, and the value is never in the message", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        for (const bad of ["short", "Bearer sk-0123456789", "sk-0123\n456789", "sk-ünïcödé-0123", "x".repeat(513), ""]) {
          const error = yield* Effect.flip(store.setKey(alice, bad, alice.id))
          assert.strictEqual(error._tag, "InvalidApiKeyError", JSON.stringify(bad))
          if (bad.length > 0) assert.notInclude(error.message, bad)
        }
        assert.deepStrictEqual(yield* rawKeys, [])
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("without LOOPCORD_SECRET_KEY a key is refused (and nothing is stored), with a log line", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const logs = yield* makeLogCapture
        const error = yield* Effect.flip(logs.capture(store.setKey(alice, "sk-alice-0123456789", alice.id)))
        assert.strictEqual(error._tag, "SecretKeyMissingError")
        assert.include(error.message, "LOOPCORD_SECRET_KEY")
        const lines = yield* logs.matching("refused to store a personal API key: LOOPCORD_SECRET_KEY is not set")
        assert.deepStrictEqual(lines.map((line) => line.level), ["ERROR"])
        assert.notInclude(JSON.stringify(yield* logs.logs), "sk-alice")
        assert.deepStrictEqual(yield* rawKeys, [])
      }).pipe(Effect.provide(storesOn(database, SecretBox.unkeyed))))

    it.effect("rotation: a key sealed under the previous key is re-sealed on its first read; a key no configured key opens is Unusable", () =>
      Effect.gen(function*() {
        const storesWith = yield* withSharedDatabase(database)
        const before = yield* Effect.gen(function*() {
          yield* (yield* CredentialStore).setKey(alice, "sk-rotate-0123456789", alice.id)
          return String((yield* rawKeys)[0]?.["sealed_key"])
        }).pipe(Effect.provide(storesWith(SecretBox.make({ current: oldKey }))))

        // The operator rotates: the new key is current, the old one previous.
        const after = yield* Effect.gen(function*() {
          assert.strictEqual(usable(yield* (yield* CredentialStore).getKey(alice)), "sk-rotate-0123456789")
          return String((yield* rawKeys)[0]?.["sealed_key"])
        }).pipe(Effect.provide(storesWith(SecretBox.make({ current: newKey, previous: oldKey }))))
        assert.notStrictEqual(after, before, "re-sealed in place")
        assert.notStrictEqual(after.split(".")[1], before.split(".")[1], "under another key id")

        // The old key can go: the re-sealed value opens with the new key alone.
        yield* Effect.gen(function*() {
          assert.strictEqual(usable(yield* (yield* CredentialStore).getKey(alice)), "sk-rotate-0123456789")
        }).pipe(Effect.provide(storesWith(SecretBox.make({ current: newKey }))))

        // A bot with an unrelated key cannot use it, and says so without the value.
        yield* Effect.gen(function*() {
          const stored = yield* (yield* CredentialStore).getKey(alice)
          assert.strictEqual(stored._tag, "Unusable")
          if (stored._tag === "Unusable") {
            assert.strictEqual(stored.reason, "unknown_key")
            assert.strictEqual(stored.setBy, alice.id)
          }
        }).pipe(Effect.provide(storesWith(SecretBox.make({ current: testSecretKey }))))
      }))

    it.effect("a sealed key copied into another owner's row does not open there", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        const sql = yield* SqlClient.SqlClient
        yield* store.setKey(guild, "sk-server-abcdefghij", "u-admin")
        const sealed = String((yield* rawKeys)[0]?.["sealed_key"])
        yield* sql`INSERT INTO credential_keys (owner_kind, owner_id, sealed_key, set_by, updated_at)
          VALUES ('user', ${alice.id}, ${sealed}, ${alice.id}, 1)`
        const stolen = yield* store.getKey(alice)
        assert.strictEqual(stolen._tag === "Unusable" ? stolen.reason : stolen._tag, "corrupt")
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("the server-route opt-out is off until set, and can be undone", () =>
      Effect.gen(function*() {
        const store = yield* CredentialStore
        assert.isFalse(yield* store.serverRouteOptOut(alice.id))
        yield* store.setServerRouteOptOut(alice.id, true)
        assert.isTrue(yield* store.serverRouteOptOut(alice.id))
        assert.isFalse(yield* store.serverRouteOptOut("someone-else"))
        yield* store.setServerRouteOptOut(alice.id, false)
        assert.isFalse(yield* store.serverRouteOptOut(alice.id))
      }).pipe(Effect.provide(storesOn(database))))
  })
}

describe("validateApiKey", () => {
  it("accepts printable ASCII keys of 8 to 512 characters, trimmed", () => {
    assert.deepStrictEqual(validateApiKey(" sk-proj-AbC_123-xyz.+/= "), Result.succeed("sk-proj-AbC_123-xyz.+/="))
    assert.strictEqual(validateApiKey("a".repeat(512))._tag, "Success")
    assert.strictEqual(validateApiKey("a".repeat(7))._tag, "Failure")
    assert.strictEqual(validateApiKey("tab\tinside-key")._tag, "Failure")
  })
})
