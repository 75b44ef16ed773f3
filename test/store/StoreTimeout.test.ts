import * as Reactivity from "effect/reactivity/Reactivity"
import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, type Context, Duration, Effect, Exit, Fiber, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { StoreConfig } from "../../src/config/StoreConfig"
import { GuildMcpRegistry } from "../../src/mcp/GuildMcpRegistry"
import * as Database from "../../src/store/Database"
import { DatabaseTarget } from "../../src/config/DatabaseUrl"
import { EnabledChannelStore } from "../../src/store/EnabledChannelStore"
import { GuildSettingsStore } from "../../src/store/GuildSettingsStore"
import { PersonaBlockStore } from "../../src/store/PersonaBlockStore"
import { ShortTermMemoryStore } from "../../src/store/ShortTermMemoryStore"
import * as Stores from "../../src/store/Stores"
import { StoreTimeout } from "../../src/store/StoreTimeout"
import { ToolUsageStore } from "../../src/store/ToolUsageStore"
import { CredentialStore } from "../../src/store/CredentialStore"
import { ServerTurnAdmissionStore } from "../../src/store/ServerTurnAdmissionStore"
import { UsageLedgerStore } from "../../src/store/UsageLedgerStore"
import { makeLogCapture } from "../support/tools/logCapture"
import { postgres } from "./databases"
import { freezingProxy, storesOnHangingDatabase } from "./hangingDatabase"

interface StoreCall {
  readonly store: string
  readonly method: string
  readonly call: Effect.Effect<unknown, { readonly message: string }, Stores.Stores>
}

const guild = { kind: "server", guildId: "g1" } as const
const on = <I extends Stores.Stores, S>(tag: Context.Key<I, S>, store: string) =>
  (method: string, call: (service: S) => Effect.Effect<unknown, { readonly message: string }>): StoreCall => ({
    store,
    method,
    call: Effect.flatMap(tag, call)
  })

const memory = on(ShortTermMemoryStore, "ShortTermMemoryStore")
const blocks = on(PersonaBlockStore, "PersonaBlockStore")
const channels = on(EnabledChannelStore, "EnabledChannelStore")
const settings = on(GuildSettingsStore, "GuildSettingsStore")
const registry = on(GuildMcpRegistry, "GuildMcpRegistry")
const usage = on(ToolUsageStore, "ToolUsageStore")
const credentials = on(CredentialStore, "CredentialStore")
const admissions = on(ServerTurnAdmissionStore, "ServerTurnAdmissionStore")
const ledger = on(UsageLedgerStore, "UsageLedgerStore")

/** One call of every method of every store, with arguments that pass validation and reach the database. */
const everyStoreCall: ReadonlyArray<StoreCall> = [
  memory("get", (s) => s.get(guild, undefined)),
  memory("replace", (s) => s.replace(guild, undefined, { summary: "x" })),
  blocks("block", (s) => s.block({ guildId: "g1", personaId: undefined, userId: "u1", userName: "u", mode: "mute", hours: 1 })),
  blocks("unblock", (s) => s.unblock("g1", undefined, "u1")),
  blocks("activeBlocks", (s) => s.activeBlocks("g1", undefined)),
  blocks("activeBlock", (s) => s.activeBlock("g1", undefined, "u1")),
  channels("enable", (s) => s.enable("g1", "c1")),
  channels("disable", (s) => s.disable("g1", "c1")),
  channels("isEnabled", (s) => s.isEnabled("g1", "c1")),
  channels("list", (s) => s.list("g1")),
  settings("get", (s) => s.get("g1")),
  settings("isEnabled", (s) => s.isEnabled("g1", "deliberate_tool_mode")),
  settings("setCapability", (s) => s.setCapability("g1", "deliberate_tool_mode", true)),
  registry("list", (s) => s.list("g1")),
  registry("add", (s) =>
    s.add({ guildId: "g1", name: "search", url: "https://mcp.example.com/s", type: "generic", enabled: true, headers: {}, addedBy: "a", addedAt: 1 })),
  registry("remove", (s) => s.remove("g1", "search")),
  registry("setEnabled", (s) => s.setEnabled("g1", "search", false)),
  usage("record", (s) => s.record("fetch_url", "g1")),
  usage("topTools", (s) => s.topTools("g1")),
  credentials("setKey", (s) => s.setKey({ kind: "user", id: "u1" }, "sk-test-0123456789", "u1")),
  credentials("clearKey", (s) => s.clearKey({ kind: "user", id: "u1" })),
  credentials("getKey", (s) => s.getKey({ kind: "user", id: "u1" })),
  credentials("setServerRouteOptOut", (s) => s.setServerRouteOptOut("u1", true)),
  credentials("serverRouteOptOut", (s) => s.serverRouteOptOut("u1")),
  admissions("admit", (s) => s.admit({ guildId: "g1", userId: "u1" }, { cooldownMs: 1000, serverDailyQuota: 1, userDailyQuota: 1 })),
  admissions("commit", (s) => s.commit("a1")),
  admissions("release", (s) => s.release("a1")),
  admissions("todayCounts", (s) => s.todayCounts({ guildId: "g1", userId: "u1" })),
  ledger("record", (s) => s.record({ guildId: "g1", userId: "u1", source: "server", usage: undefined })),
  ledger("totals", (s) => s.totals({ userId: "u1" }, 7))
]

const failureMessage = (exit: Exit.Exit<unknown, { readonly message: string }>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Option.map(Cause.findErrorOption(exit.cause), (error) => error.message)) : undefined

describe("STORE_TIMEOUT_MS: every store call is bounded (issue 11.6)", () => {
  it.effect("a database that never answers: every method of every store fails at exactly STORE_TIMEOUT_MS, typed, with one log line", () =>
    Effect.gen(function*() {
      const { database, layer } = yield* storesOnHangingDatabase
      const logs = yield* makeLogCapture
      const context = yield* Layer.build(layer)
      // The table covers every method the stores have (a new method must be added here).
      const methodsOf = yield* Effect.all({
        ShortTermMemoryStore: ShortTermMemoryStore,
        PersonaBlockStore: PersonaBlockStore,
        EnabledChannelStore: EnabledChannelStore,
        GuildSettingsStore: GuildSettingsStore,
        GuildMcpRegistry: GuildMcpRegistry,
        ToolUsageStore: ToolUsageStore,
        CredentialStore: CredentialStore,
        ServerTurnAdmissionStore: ServerTurnAdmissionStore,
        UsageLedgerStore: UsageLedgerStore
      }).pipe(Effect.provide(context))
      const all = Object.entries(methodsOf).flatMap(([store, service]) => Object.keys(service).map((method) => `${store}.${method}`))
      assert.sameMembers(everyStoreCall.map((entry) => `${entry.store}.${entry.method}`), all)

      for (const entry of everyStoreCall) {
        const fiber = yield* Effect.forkChild(logs.capture(entry.call.pipe(Effect.provide(context))))
        yield* TestClock.adjust(Duration.millis(9_999))
        assert.isTrue(fiber.pollUnsafe() === undefined, `${entry.store}.${entry.method} still waits at 9999 ms`)
        yield* TestClock.adjust(Duration.millis(1))
        const exit = yield* Fiber.await(fiber)
        const message = failureMessage(exit)
        assert.include(message ?? "", "the database did not answer within 10000 ms (STORE_TIMEOUT_MS)", `${entry.store}.${entry.method}`)
        const lines = yield* logs.matching(`${entry.store}.${entry.method}: the database did not answer`)
        assert.strictEqual(lines.length, 1, `${entry.store}.${entry.method} logged once`)
        assert.strictEqual(lines[0]?.level, "ERROR")
      }
      assert.strictEqual(yield* database.started, everyStoreCall.length, "each call reached the database")
      // Abandoned statements are interrupted in the background, except a transaction's BEGIN,
      // which effect/sql runs uninterruptibly: the deadline held for those three all the same.
      yield* Effect.yieldNow
      assert.strictEqual(yield* database.interrupted, everyStoreCall.length - 3)
    }))

  it.effect("the StoreError says which store and call timed out, with reason `timeout`; STORE_TIMEOUT_MS sets the deadline", () =>
    Effect.gen(function*() {
      const { layer } = yield* storesOnHangingDatabase
      const fiber = yield* Effect.forkChild(Effect.flatMap(ShortTermMemoryStore, (store) => store.get(guild, undefined)).pipe(
        Effect.provide(layer),
        Effect.provideService(StoreTimeout, Duration.millis(2_500)),
        Effect.flip
      ))
      yield* TestClock.adjust("2499 millis")
      assert.isTrue(fiber.pollUnsafe() === undefined)
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.deepStrictEqual([error._tag, error.store, error.operation, error.reason], ["StoreError", "ShortTermMemoryStore", "get", "timeout"])
      assert.strictEqual(error.message, "ShortTermMemoryStore.get: the database did not answer within 2500 ms (STORE_TIMEOUT_MS)")
    }))

  it.effect("a store that answers in time is unaffected", () =>
    Effect.gen(function*() {
      const store = yield* ShortTermMemoryStore
      yield* store.replace(guild, undefined, { summary: "kept" })
      assert.deepStrictEqual(yield* store.get(guild, undefined), { summary: "kept" })
    }).pipe(Effect.provide(Stores.layerMemory)))

  it.effect("STORE_TIMEOUT_MS: default 10000, minimum 1000, a non-integer fails naming the variable; Stores.layerConfig applies it", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.flatMap(StoreConfig, (config) => Effect.succeed(Duration.toMillis(config.timeout))).pipe(
          Effect.provide(StoreConfig.layer),
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))
        )
      assert.strictEqual(yield* read({}), 10_000)
      assert.strictEqual(yield* read({ STORE_TIMEOUT_MS: "2500" }), 2_500)
      assert.strictEqual(yield* read({ STORE_TIMEOUT_MS: "5" }), 1_000)
      const bad = yield* Effect.flip(read({ STORE_TIMEOUT_MS: "soon" }))
      assert.include(String(bad), "STORE_TIMEOUT_MS")
    }))
})

describe("a real database behind a dead network (PostgreSQL through a proxy that stops forwarding)", () => {
  it.live("the store call fails at STORE_TIMEOUT_MS, not after the driver's own cancel wait; once the network is back the store answers", () =>
    Effect.gen(function*() {
      const target = yield* postgres.target
      if (target._tag !== "Postgres") return assert.fail("expected a PostgreSQL target")
      const proxy = yield* freezingProxy({ host: "127.0.0.1", port: 5432 })
      const url = new URL(Redacted.value(target.url))
      url.port = String(proxy.port)
      const layer = Stores.layerWithoutDatabase.pipe(
        Layer.provide(Database.layer(DatabaseTarget.Postgres({ url: Redacted.make(url.toString()) }))),
        Layer.provide(Layer.succeed(StoreTimeout, Duration.millis(500)))
      )
      const context = yield* Layer.build(layer)
      const store = yield* Effect.provide(ShortTermMemoryStore, context)
      yield* store.replace(guild, undefined, { summary: "before" })

      yield* proxy.freeze
      const started = Date.now()
      const error = yield* Effect.flip(store.get(guild, undefined))
      const elapsed = Date.now() - started
      assert.strictEqual(error.reason, "timeout")
      // The PostgreSQL client cancels an interrupted query over the (dead) network and waits up to 5 s for that;
      // the deadline does not wait with it.
      assert.isAtLeast(elapsed, 450)
      assert.isBelow(elapsed, 3_000, `failed after ${elapsed} ms`)

      yield* proxy.thaw
      assert.deepStrictEqual(yield* store.get(guild, undefined), { summary: "before" })
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)), 30_000)
})
