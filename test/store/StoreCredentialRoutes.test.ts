import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { CredentialStore } from "../../src/store/CredentialStore"
import { GuildSettingsStore } from "../../src/store/GuildSettingsStore"
import { SecretBox } from "../../src/store/SecretBox"
import { type CredentialProblem, makeStoreCredentialRoutes } from "../../src/store/StoreCredentialRoutes"
import * as Stores from "../../src/store/Stores"
import { makeLogCapture } from "../support/tools/logCapture"
import { migratedLayer, sqliteMemory } from "./databases"
import { storesOnHangingDatabase } from "./hangingDatabase"
import { storesOn } from "./stores"

const owner = { guildId: "g1", userId: "alice" }

/** The routes over the stores, with every private notice recorded instead of sent. */
const routesWith = Effect.gen(function*() {
  const told = yield* Ref.make<ReadonlyArray<readonly [string, CredentialProblem["_tag"]]>>([])
  const routes = yield* makeStoreCredentialRoutes((userId, problem) => Ref.update(told, (all) => [...all, [userId, problem._tag] as const]))
  return { routes, told: Ref.get(told) }
})

describe("CredentialRoutes over the stores", () => {
  it.effect("a personal key, user_byok_mode, the opt-out (only with a key) and the server key, read for the turn", () =>
    Effect.gen(function*() {
      const store = yield* CredentialStore
      const settings = yield* GuildSettingsStore
      const { routes } = yield* routesWith
      const nothing = yield* routes.forTurn(owner)
      assert.isTrue(Option.isNone(nothing.personalKey))
      assert.isFalse(nothing.userByokMode)
      assert.strictEqual((yield* nothing.serverCredential)._tag, "OperatorPool", "no server key: the operator's pool")

      yield* store.setServerRouteOptOut("alice", true)
      assert.isFalse((yield* routes.forTurn(owner)).serverRouteOptOut, "an opt-out without a personal key means nothing")
      yield* store.setKey({ kind: "user", id: "alice" }, "sk-alice-0123456789", "alice")
      yield* store.setKey({ kind: "guild", id: "g1" }, "sk-guild-0123456789", "admin")
      yield* settings.setCapability("g1", "user_byok_mode", true)
      const all = yield* routes.forTurn(owner)
      assert.strictEqual(Redacted.value(Option.getOrThrow(all.personalKey)), "sk-alice-0123456789")
      assert.isTrue(all.serverRouteOptOut)
      assert.isTrue(all.userByokMode)
      const credential = yield* all.serverCredential
      assert.strictEqual(credential._tag === "ServerKey" ? Redacted.value(credential.key) : credential._tag, "sk-guild-0123456789")
      // In DMs there is no server: no byok mode, the operator's pool.
      const dm = yield* routes.forTurn({ guildId: undefined, userId: "alice" })
      assert.isFalse(dm.userByokMode)
      assert.strictEqual((yield* dm.serverCredential)._tag, "OperatorPool")
    }).pipe(Effect.provide(storesOn(sqliteMemory))))

  it.effect("keys that do not open are not used, logged without their value, and told to their owner once per hour", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const sql = Layer.succeedContext(yield* Layer.buildWithScope(migratedLayer(sqliteMemory), scope))
      const storesWith = (key: number) => Stores.layerOnClient.pipe(Layer.provide(Layer.merge(sql, SecretBox.make({ current: new Uint8Array(32).fill(key) }))))
      yield* Effect.gen(function*() {
        const store = yield* CredentialStore
        yield* store.setKey({ kind: "user", id: "alice" }, "sk-alice-0123456789", "alice")
        yield* store.setKey({ kind: "guild", id: "g1" }, "sk-guild-0123456789", "admin")
      }).pipe(Effect.provide(storesWith(1)))
      // The operator replaced LOOPCORD_SECRET_KEY without keeping the old one as PREVIOUS.
      yield* Effect.gen(function*() {
        const logs = yield* makeLogCapture
        const { routes, told } = yield* routesWith
        const turn = yield* logs.capture(routes.forTurn(owner))
        assert.isTrue(Option.isNone(turn.personalKey))
        assert.strictEqual((yield* logs.capture(turn.serverCredential))._tag, "OperatorPool")
        assert.deepStrictEqual(yield* told, [["alice", "PersonalKeyUnusable"], ["admin", "ServerKeyUnusable"]])
        yield* logs.capture(Effect.flatMap(routes.forTurn(owner), (again) => again.serverCredential))
        assert.strictEqual((yield* told).length, 2, "not told again within the hour")
        yield* TestClock.adjust("1 hour")
        yield* Effect.flatMap(routes.forTurn(owner), (again) => again.serverCredential)
        assert.strictEqual((yield* told).length, 4, "told again after an hour")
        assert.isAtLeast((yield* logs.matching("does not open")).length, 2)
        assert.notInclude(JSON.stringify(yield* logs.logs), "sk-alice")
        // A refusal by the provider is told to the user, once per key and window too.
        yield* turn.personalKeyRefused(401)
        yield* turn.personalKeyRefused(401)
        assert.deepStrictEqual((yield* told).slice(4), [["alice", "PersonalKeyRefused"]])
      }).pipe(Effect.provide(storesWith(2)))
    }))

  it.effect("a database that does not answer: the turn runs as if nothing were set (one STORE_TIMEOUT_MS), the server route fails to prepare", () =>
    Effect.gen(function*() {
      const { layer } = yield* storesOnHangingDatabase
      const logs = yield* makeLogCapture
      const { routes } = yield* routesWith.pipe(Effect.provide(layer))
      const fiber = yield* Effect.forkChild(logs.capture(routes.forTurn(owner)))
      yield* TestClock.adjust("10 seconds")
      // The three lookups ran side by side: one deadline, not three in a row.
      const polled = Option.fromUndefinedOr(fiber.pollUnsafe())
      assert.isTrue(Option.isSome(polled), "answered after one STORE_TIMEOUT_MS")
      const turn = Option.getOrThrow(polled)
      if (!Exit.isSuccess(turn)) return assert.fail("forTurn never fails")
      assert.isTrue(Option.isNone(turn.value.personalKey))
      assert.isFalse(turn.value.userByokMode)
      const prepared = yield* Effect.forkChild(Effect.result(turn.value.serverCredential))
      yield* TestClock.adjust("10 seconds")
      const failed = yield* Fiber.await(prepared)
      assert.isTrue(failed._tag === "Success" && failed.value._tag === "Failure" && failed.value.failure._tag === "CredentialRouteError")
    }))
})
