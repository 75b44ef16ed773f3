import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, References } from "effect"
import { TestClock } from "effect/testing"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { CredentialConfig } from "../../src/config/CredentialConfig"
import { ServerAdmission } from "../../src/loop/ServerAdmission"
import * as Database from "../../src/store/Database"
import { type AdmissionLimits, type AdmissionRow, DAY_MS, ServerTurnAdmissionStore } from "../../src/store/ServerTurnAdmissionStore"
import { makeLogCapture } from "../support/tools/logCapture"
import { postgres, sqliteFile, testDatabases } from "./databases"
import { storesOnHangingDatabase } from "./hangingDatabase"
import { storesOn } from "./stores"

const child = fileURLToPath(new URL("./fixtures/admissionChild.ts", import.meta.url))

const limits = (overrides: Partial<AdmissionLimits>): AdmissionLimits => ({ cooldownMs: 0, serverDailyQuota: 0, userDailyQuota: 0, ...overrides })
const alice = { guildId: "g1", userId: "alice" }
const bob = { guildId: "g1", userId: "bob" }

const reasonOf = (row: AdmissionRow) => (row._tag === "Refused" ? row.reason : "admitted")
const idOf = (row: AdmissionRow) => (row._tag === "Reserved" ? row.admissionId : assert.fail(`refused: ${reasonOf(row)}`))

for (const database of testDatabases) {
  describe(`ServerTurnAdmissionStore on ${database.name} (SERVER_MESSAGE_COOLDOWN_MS, SERVER_/USER_DAILY_TURN_QUOTA)`, () => {
    it.effect("the cooldown is per user and server, measured on the Clock, and says when it lifts", () =>
      Effect.gen(function*() {
        const store = yield* ServerTurnAdmissionStore
        const cooldown = limits({ cooldownMs: 5_000 })
        idOf(yield* store.admit(alice, cooldown))
        yield* TestClock.adjust("2 seconds")
        const refused = yield* store.admit(alice, cooldown)
        assert.deepStrictEqual(refused, { _tag: "Refused", reason: "cooldown", retryAfterMs: 3_000 } as AdmissionRow)
        // Another user, and the same user in another server, are not held back.
        idOf(yield* store.admit(bob, cooldown))
        idOf(yield* store.admit({ guildId: "g2", userId: "alice" }, cooldown))
        yield* TestClock.adjust("2999 millis")
        assert.strictEqual(reasonOf(yield* store.admit(alice, cooldown)), "cooldown")
        yield* TestClock.adjust("1 millis")
        idOf(yield* store.admit(alice, cooldown))
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("the cooldown is checked first, then the server quota, then the user quota; a refusal takes nothing", () =>
      Effect.gen(function*() {
        const store = yield* ServerTurnAdmissionStore
        const all = limits({ cooldownMs: 10_000, serverDailyQuota: 3, userDailyQuota: 2 })
        idOf(yield* store.admit(alice, all))
        // In cooldown and (below) within quota: the cooldown answers.
        assert.strictEqual(reasonOf(yield* store.admit(alice, all)), "cooldown")
        yield* TestClock.adjust("10 seconds")
        idOf(yield* store.admit(alice, all))
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(reasonOf(yield* store.admit(alice, all)), "user_quota", "alice used her 2")
        idOf(yield* store.admit(bob, all))
        assert.deepStrictEqual(yield* store.todayCounts(alice), { serverTurns: 3, userTurns: 2 }, "refusals reserved nothing")
        yield* TestClock.adjust("10 seconds")
        // Both quotas exhausted for alice, the cooldown over: the server quota answers first.
        assert.strictEqual(reasonOf(yield* store.admit(alice, all)), "server_quota")
        assert.strictEqual(reasonOf(yield* store.admit({ guildId: "g1", userId: "carol" }, all)), "server_quota")
        // In cooldown with every quota exhausted: still the cooldown.
        assert.strictEqual(reasonOf(yield* store.admit(bob, limits({ ...all, cooldownMs: 60_000 }))), "cooldown")
        assert.deepStrictEqual(yield* store.todayCounts(alice), { serverTurns: 3, userTurns: 2 })
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("release gives the unit back and lifts the cooldown it started; commit keeps both", () =>
      Effect.gen(function*() {
        const store = yield* ServerTurnAdmissionStore
        const tight = limits({ cooldownMs: 60_000, serverDailyQuota: 1 })
        const failed = idOf(yield* store.admit(alice, tight))
        assert.strictEqual(reasonOf(yield* store.admit(bob, tight)), "server_quota")
        yield* store.release(failed)
        assert.deepStrictEqual(yield* store.todayCounts(alice), { serverTurns: 0, userTurns: 0 })
        const answered = idOf(yield* store.admit(alice, tight))
        yield* store.commit(answered)
        assert.strictEqual(reasonOf(yield* store.admit(alice, tight)), "cooldown")
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(reasonOf(yield* store.admit(bob, tight)), "server_quota")
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("quotas are per UTC day: the next day starts from zero, and old rows are pruned", () =>
      Effect.gen(function*() {
        const store = yield* ServerTurnAdmissionStore
        const daily = limits({ serverDailyQuota: 2, userDailyQuota: 1 })
        yield* TestClock.adjust(Duration.millis(DAY_MS - 10))
        idOf(yield* store.admit(alice, daily))
        idOf(yield* store.admit(bob, daily))
        assert.strictEqual(reasonOf(yield* store.admit({ guildId: "g1", userId: "carol" }, daily)), "server_quota")
        yield* TestClock.adjust("10 millis")
        idOf(yield* store.admit(alice, daily))
        assert.deepStrictEqual(yield* store.todayCounts(alice), { serverTurns: 1, userTurns: 1 })
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT day FROM server_turn_admissions`)
        assert.deepStrictEqual(rows.map((row) => Number(row["day"])), [1], "yesterday's rows are gone")
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("DMs share one scope of their own", () =>
      Effect.gen(function*() {
        const store = yield* ServerTurnAdmissionStore
        const daily = limits({ serverDailyQuota: 1 })
        idOf(yield* store.admit({ guildId: undefined, userId: "alice" }, daily))
        assert.strictEqual(reasonOf(yield* store.admit({ guildId: undefined, userId: "bob" }, daily)), "server_quota")
        idOf(yield* store.admit(alice, daily))
      }).pipe(Effect.provide(storesOn(database))))
  })
}

describe("concurrent admission: two bots never both take the last unit", () => {
  it.effect("PostgreSQL: two processes' connection pools ask 2 × 12 times at once for a quota of 7: exactly 7 admitted", () =>
    Effect.gen(function*() {
      const target = yield* postgres.target
      const scope = yield* Effect.scope
      const shard = () => Effect.map(Layer.buildWithScope(ServerTurnAdmissionStore.layer.pipe(Layer.provide(Database.layer(target))), scope), (context) => context)
      const [first, second] = yield* Effect.all([shard(), shard()])
      const ask = (context: typeof first, name: string) =>
        Effect.all(
          Array.from({ length: 12 }, (_, index) =>
            Effect.flatMap(ServerTurnAdmissionStore, (store) =>
              store.admit({ guildId: "g-shared", userId: `${name}-${index}` }, limits({ serverDailyQuota: 7 }))).pipe(Effect.provide(context))),
          { concurrency: "unbounded" }
        )
      const answers = (yield* Effect.all([ask(first, "a"), ask(second, "b")], { concurrency: 2 })).flat()
      assert.strictEqual(answers.filter((answer) => answer._tag === "Reserved").length, 7)
      assert.isTrue(answers.filter((answer) => answer._tag === "Refused").every((answer) => reasonOf(answer) === "server_quota"))
      const counts = yield* Effect.flatMap(ServerTurnAdmissionStore, (store) => store.todayCounts({ guildId: "g-shared", userId: "a-0" })).pipe(
        Effect.provide(first)
      )
      assert.strictEqual(counts.serverTurns, 7)
    }), 60_000)

  it.live("SQLite: three bot processes on one database file ask 3 × 8 times at once for a quota of 5: exactly 5 admitted", () =>
    Effect.gen(function*() {
      const target = yield* sqliteFile.target
      if (target._tag !== "SqliteFile") return assert.fail("expected a SQLite file")
      // Migrated once first, as the first process to start would.
      yield* Effect.scoped(Layer.build(Database.layer(target))).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
      // Each process boots, says READY, and asks only when all are ready: their transactions overlap.
      const processes = Array.from({ length: 3 }, () => {
        const proc = spawn("npx", ["tsx", child], {
          env: { ...process.env, ADMISSION_DB: target.path, ADMISSION_TURNS: "8", ADMISSION_QUOTA: "5" },
          stdio: ["pipe", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
        proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
        const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve))
        return { proc, exited, stdout: () => stdout, stderr: () => stderr }
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => processes.forEach(({ proc }) => proc.kill())))
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 90_000
        while (!processes.every(({ stdout }) => stdout().includes("READY"))) {
          if (Date.now() > deadline) throw new Error(`the bot processes did not start: ${processes.map(({ stderr }) => stderr()).join(" | ")}`)
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        for (const { proc } of processes) proc.stdin.write("go\n")
      })
      const codes = yield* Effect.promise(() => Promise.all(processes.map(({ exited }) => exited)))
      assert.deepStrictEqual(codes, [0, 0, 0], processes.map(({ stderr }) => stderr()).join(" | "))
      const outputs = processes.map(({ stdout }) => stdout())
      const answers = outputs.flatMap((output): ReadonlyArray<string> => JSON.parse(output.trim().split("\n").at(-1) ?? "[]"))
      assert.strictEqual(answers.length, 24)
      assert.strictEqual(answers.filter((tag) => tag === "Reserved").length, 5, outputs.join(" | "))
    }).pipe(Effect.scoped), 120_000)
})

describe("ServerAdmission over the store (the loop's port)", () => {
  it.effect("with every limit off the database is never asked: a turn is admitted even when it does not answer", () =>
    Effect.gen(function*() {
      const { database, layer } = yield* storesOnHangingDatabase
      const admission = yield* Effect.provide(
        ServerAdmission,
        ServerTurnAdmissionStore.admissionLayer.pipe(Layer.provide(Layer.merge(layer, CredentialConfig.make())))
      )
      const answer = yield* admission.admit(alice)
      assert.strictEqual(answer._tag, "Admitted")
      assert.strictEqual(yield* database.started, 0)
    }))

  it.effect("a database that does not answer admits the turn after STORE_TIMEOUT_MS, with an error line", () =>
    Effect.gen(function*() {
      const { layer } = yield* storesOnHangingDatabase
      const logs = yield* makeLogCapture
      const admission = yield* Effect.provide(
        ServerAdmission,
        ServerTurnAdmissionStore.admissionLayer.pipe(Layer.provide(Layer.merge(layer, CredentialConfig.make({ serverDailyTurnQuota: 1 }))))
      )
      const fiber = yield* Effect.forkChild(logs.capture(admission.admit(alice)))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* Fiber.join(fiber))._tag, "Admitted")
      assert.strictEqual((yield* logs.matching("server-turn admission unavailable, the turn is admitted")).length, 1)
    }))

  it.effect("admitted turns settle: commit keeps the unit, release returns it", () =>
    Effect.gen(function*() {
      const admission = yield* ServerAdmission
      const store = yield* ServerTurnAdmissionStore
      const first = yield* admission.admit(alice)
      if (first._tag !== "Admitted") return assert.fail("expected an admission")
      assert.strictEqual((yield* admission.admit(bob))._tag, "Refused")
      yield* first.settle("release")
      const second = yield* admission.admit(bob)
      if (second._tag !== "Admitted") return assert.fail("expected an admission after the release")
      yield* second.settle("commit")
      const third = yield* admission.admit(alice)
      assert.deepStrictEqual(third, { _tag: "Refused", reason: "server_quota", retryAfterMs: undefined } as typeof third)
      assert.strictEqual((yield* store.todayCounts(alice)).serverTurns, 1)
    }).pipe(
      Effect.provide(Layer.provideMerge(
        ServerTurnAdmissionStore.admissionLayer.pipe(Layer.provide(CredentialConfig.make({ serverDailyTurnQuota: 1 }))),
        storesOn(testDatabases[0]!)
      ))
    ))
})
