import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted, Ref, Result } from "effect"
import { TestClock } from "effect/testing"
import { CredentialConfig, type CredentialSettings } from "../../src/config/CredentialConfig"
import { CredentialRouteError, CredentialRoutes, ServerCredential, type TurnCredentials } from "../../src/loop/CredentialRoutes"
import { CurrentTurn } from "../../src/loop/CurrentTurn"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { consumesQuota, serverRouteWithheld } from "../../src/loop/turnRoutes"
import { UserNotice } from "../../src/loop/UserNotice"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { ServerTurnAdmissionStore } from "../../src/store/ServerTurnAdmissionStore"
import { UsageLedgerStore } from "../../src/store/UsageLedgerStore"
import { sqliteMemory } from "../store/databases"
import { storesOn } from "../store/stores"
import { type LoopHarness, withLoopHarness } from "./harness"

/**
 * Scenario 72 and its variants (spec §5 server-route extension, the reference's
 * generationTurnFallback tests): a personal-key turn whose planned attempts all failed retryably
 * builds the server route once, lazily, admits it (cooldown, then quota; the real store on
 * SQLite, cooldowns on the TestClock), and switches the credential source to `server`.
 */

const PERSONAL = "sk-personal-0001"
const SERVER = "sk-server-0002"

const keyOf = (request: GenerationRequest) => (request.apiKey === undefined ? "none" : Redacted.value(request.apiKey))
const rateLimited = S.fail("RateLimit", "429 Too Many Requests: rate_limit_exceeded", { status: 429 })
const refused = S.fail("Auth", "401 invalid api key", { status: 401 })

/** What the front knows about the user and the server, and what the loop asked of it. */
interface Fake {
  readonly personalKey?: string
  /** `fail`: the server route cannot be prepared; `none`: the server set no key (the operator's pool answers). */
  readonly serverKey?: string | "fail" | "none"
  readonly userByokMode?: boolean
  readonly serverRouteOptOut?: boolean
}

interface Recorded {
  /** For each materialization of the server route: how many provider requests had been made before it. */
  readonly materializedAfter: Effect.Effect<ReadonlyArray<number>>
  readonly personalKeyRefused: Effect.Effect<ReadonlyArray<number | undefined>>
}

const fakeCredentials = (fake: Fake) =>
  Effect.gen(function*() {
    const probe = yield* ScriptedProbe
    const materialized = yield* Ref.make<ReadonlyArray<number>>([])
    const told = yield* Ref.make<ReadonlyArray<number | undefined>>([])
    const credentials: TurnCredentials = {
      personalKey: Option.map(Option.fromNullishOr(fake.personalKey), Redacted.make),
      userByokMode: fake.userByokMode ?? false,
      serverRouteOptOut: fake.serverRouteOptOut ?? false,
      serverCredential: Effect.gen(function*() {
        const before = (yield* probe.requests).length
        yield* Ref.update(materialized, (all) => [...all, before])
        const serverKey = fake.serverKey ?? SERVER
        if (serverKey === "fail") return yield* new CredentialRouteError({ detail: "the server's key could not be read: database down" })
        return serverKey === "none" ? ServerCredential.OperatorPool() : ServerCredential.ServerKey({ key: Redacted.make(serverKey) })
      }),
      personalKeyRefused: (status) => Ref.update(told, (all) => [...all, status])
    }
    const recorded: Recorded = { materializedAfter: Ref.get(materialized), personalKeyRefused: Ref.get(told) }
    return { layer: Layer.succeed(CredentialRoutes, { forTurn: () => Effect.succeed(credentials) }), recorded }
  })

/**
 * A turn harness (scripted model, collecting sink) with a route plan, the key pool, the fake
 * credentials, and the real admission and usage ledger over one in-memory SQLite database.
 */
const withRoutes = <A, E, R>(
  options: {
    readonly script: S.Script
    readonly fake: Fake
    readonly models?: ReadonlyArray<string>
    readonly operatorKeys?: ReadonlyArray<string>
    readonly limits?: Partial<CredentialSettings>
  },
  body: (harness: LoopHarness & { readonly recorded: Recorded }) => Effect.Effect<A, E, R>
) =>
  withLoopHarness({ script: options.script }, (harness) =>
    Effect.gen(function*() {
      const { layer, recorded } = yield* fakeCredentials(options.fake)
      const store = Layer.provideMerge(
        Layer.mergeAll(ServerTurnAdmissionStore.admissionLayer, UsageLedgerStore.ledgerLayer),
        Layer.merge(storesOn(sqliteMemory), CredentialConfig.make(options.limits))
      )
      return yield* body({ ...harness, recorded }).pipe(
        Effect.provide(Layer.mergeAll(
          layer,
          store,
          RoutePlan.make(options.models ?? ["primary", "fallback"], options.operatorKeys ?? ["op-0", "op-1"]),
          KeyPool.Default
        ))
      )
    }))

const personalFailsThenServer = ({ request }: S.ScriptCall) => (keyOf(request) === PERSONAL ? [rateLimited] : S.reply(`answered on ${keyOf(request)}`))

describe("[72] runGenerationTurn: personal route, then the server route (spec §5)", () => {
  it.effect("[72] the personal route fails: the server route is built once, only after the last planned attempt, and answers; the source becomes server", () =>
    withRoutes({ script: personalFailsThenServer, fake: { personalKey: PERSONAL } }, ({ collected, recorded }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, `answered on ${SERVER}`)
        assert.strictEqual(result.credentialSource, "server")
        const requests = yield* (yield* ScriptedProbe).requests
        assert.deepStrictEqual(requests.map((request) => `${request.model}/${keyOf(request)}`), [
          `primary/${PERSONAL}`,
          `fallback/${PERSONAL}`,
          `primary/${SERVER}`
        ], "every planned model on the personal key first, then the server route's models")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [2], "materialized once, after both personal attempts")
        assert.deepStrictEqual(result.attempts.map((attempt) => attempt.status), ["error", "error", "completed"])
        // The personal attempts stayed quiet (a server route was pending); the answer says a fallback was used.
        assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["FallbackUsed"])
        assert.strictEqual((yield* (yield* ServerTurnAdmissionStore).todayCounts({ guildId: "guild-1", userId: "user-1" })).serverTurns, 0, "no limits: nothing counted")
      })))

  it.effect("[72] lazy: when the personal key answers, the server route is never built", () =>
    withRoutes({ script: () => S.reply("mine"), fake: { personalKey: PERSONAL } }, ({ recorded }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.credentialSource, "personal")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [])
        assert.deepStrictEqual((yield* (yield* ScriptedProbe).requests).map(keyOf), [PERSONAL])
      })))

  it.effect("[72] lazy: a terminal failure (not retryable) on the personal route never builds it either", () =>
    withRoutes({
      script: ({ index }) => (index === 0 ? S.callTool("nonexistent_tool_x") : [S.text("partial"), S.finish("stop")]),
      fake: { personalKey: PERSONAL },
      models: ["only"]
    }, ({ recorded }) =>
      Effect.gen(function*() {
        yield* runGenerationTurn()
        assert.deepStrictEqual(yield* recorded.materializedAfter, [])
      })))

  it.effect("[72] admission checks the cooldown first (TestClock): refused ⇒ no server attempt, the personal error is the outcome, the user is told when to retry", () =>
    withRoutes({
      script: personalFailsThenServer,
      fake: { personalKey: PERSONAL },
      models: ["only"],
      limits: { serverMessageCooldownMs: 5_000, serverDailyTurnQuota: 1 }
    }, ({ collected }) =>
      Effect.gen(function*() {
        const first = yield* runGenerationTurn()
        assert.strictEqual(first.credentialSource, "server")
        yield* TestClock.adjust("2 seconds")
        const before = (yield* (yield* ScriptedProbe).requests).length
        const second = yield* runGenerationTurn()
        const requests = (yield* (yield* ScriptedProbe).requests).slice(before)
        assert.deepStrictEqual(requests.map(keyOf), [PERSONAL], "no attempt on the server's key")
        assert.strictEqual(second.status, "error")
        assert.strictEqual(second.credentialSource, "personal")
        const notices = (yield* collected.notices).slice(1)
        // Both limits refuse (quota 1 is used up), and the cooldown is the one that answers.
        assert.deepStrictEqual(notices[0], UserNotice.ServerRouteRefused({ reason: "cooldown", retryAfterMs: 3_000 }))
        assert.strictEqual(notices[1]?._tag, "ProviderFailed")
        if (notices[1]?._tag === "ProviderFailed") assert.strictEqual(notices[1].reason, "rate_limited", "the personal error stands")
        yield* TestClock.adjust("3 seconds")
        yield* runGenerationTurn()
        assert.deepStrictEqual((yield* collected.notices).at(-2), UserNotice.ServerRouteRefused({ reason: "server_quota", retryAfterMs: undefined }))
      })))

  it.effect("[72] the server quota refuses once used up; the next UTC day admits again", () =>
    withRoutes({
      script: personalFailsThenServer,
      fake: { personalKey: PERSONAL },
      models: ["only"],
      limits: { serverDailyTurnQuota: 1 }
    }, () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* runGenerationTurn()).credentialSource, "server")
        const refusedTurn = yield* runGenerationTurn()
        assert.strictEqual(refusedTurn.status, "error")
        assert.strictEqual(refusedTurn.credentialSource, "personal")
        yield* TestClock.adjust("24 hours")
        assert.strictEqual((yield* runGenerationTurn()).credentialSource, "server")
      })))

  for (const [name, fake] of [
    ["user_byok_mode", { personalKey: PERSONAL, userByokMode: true }],
    ["the user's opt-out", { personalKey: PERSONAL, serverRouteOptOut: true }]
  ] as const) {
    it.effect(`[72] withheld under ${name}: only the personal attempts run, the server route is never built`, () =>
      withRoutes({ script: personalFailsThenServer, fake, limits: { serverDailyTurnQuota: 5 } }, ({ collected, recorded }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "error")
          assert.strictEqual(result.credentialSource, "personal")
          assert.deepStrictEqual((yield* (yield* ScriptedProbe).requests).map(keyOf), [PERSONAL, PERSONAL])
          assert.deepStrictEqual(yield* recorded.materializedAfter, [])
          assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["ProviderFailed"])
          assert.strictEqual((yield* (yield* ServerTurnAdmissionStore).todayCounts({ guildId: "guild-1", userId: "user-1" })).serverTurns, 0)
        })))
  }

  it.effect("[72] withheld under user impersonation", () =>
    withRoutes({ script: personalFailsThenServer, fake: { personalKey: PERSONAL } }, ({ recorded, tools }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn().pipe(
          Effect.provideService(CurrentTurn, { ...tools.turn, isUserImpersonation: true, shouldSurfaceUserErrors: false }),
          Effect.result
        )
        // Impersonation never uses the user's personal key either: the server route is planned.
        assert.isTrue(Result.isSuccess(result) && result.success.credentialSource === "server")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [0])
      })))

  it.effect("[72] a preparation failure keeps the personal error as the outcome (logged, no admission)", () =>
    withRoutes({
      script: personalFailsThenServer,
      fake: { personalKey: PERSONAL, serverKey: "fail" },
      limits: { serverDailyTurnQuota: 5 }
    }, ({ collected, recorded, tools }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "error")
        assert.strictEqual(result.credentialSource, "personal")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [2])
        assert.deepStrictEqual((yield* (yield* ScriptedProbe).requests).map(keyOf), [PERSONAL, PERSONAL])
        const notices = yield* collected.notices
        assert.deepStrictEqual(notices.map((notice) => notice._tag), ["ProviderFailed"])
        if (notices[0]?._tag === "ProviderFailed") assert.strictEqual(notices[0].reason, "rate_limited", "the personal 429, not the preparation")
        assert.strictEqual((yield* tools.logs.matching("the server route could not be prepared; the personal attempts' failure stands")).length, 1)
        assert.strictEqual((yield* (yield* ServerTurnAdmissionStore).todayCounts({ guildId: "guild-1", userId: "user-1" })).serverTurns, 0)
      })))

  it.effect("[72] no quota consumed on total failure: the server route failed too, its unit and cooldown are given back", () => {
    let serverDown = true
    return withRoutes({
      script: ({ request }) =>
        keyOf(request) === PERSONAL ? [rateLimited] : serverDown ? [S.fail("Server", "503 upstream down", { status: 503 })] : S.reply("ok"),
      fake: { personalKey: PERSONAL },
      models: ["only"],
      limits: { serverMessageCooldownMs: 60_000, serverDailyTurnQuota: 1, userDailyTurnQuota: 1 }
    }, () =>
      Effect.gen(function*() {
        const admissions = yield* ServerTurnAdmissionStore
        // Personal 429, then the server's key 503: the turn failed altogether.
        const failed = yield* runGenerationTurn()
        assert.strictEqual(failed.status, "error")
        assert.strictEqual(failed.credentialSource, "server")
        assert.deepStrictEqual(failed.attempts.map((attempt) => attempt.status), ["error", "error"])
        assert.deepStrictEqual(yield* admissions.todayCounts({ guildId: "guild-1", userId: "user-1" }), { serverTurns: 0, userTurns: 0 })
        // Right away (no cooldown left behind, the units are back) the server route is admitted again, and answers.
        serverDown = false
        const answered = yield* runGenerationTurn()
        assert.strictEqual(answered.status, "completed")
        assert.strictEqual(answered.credentialSource, "server")
        assert.deepStrictEqual(yield* admissions.todayCounts({ guildId: "guild-1", userId: "user-1" }), { serverTurns: 1, userTurns: 1 }, "an answer is committed")
      }))
  })

  it.effect("[72] the credential-source switch: a stream timeout on the server route is the plain notice; on the personal key the personal variant (spec §4)", () =>
    withRoutes({
      script: () => [S.hang],
      fake: { personalKey: PERSONAL },
      models: ["only"]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        yield* TestClock.adjust("300 seconds")
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.status, "timeout")
        assert.strictEqual(result.credentialSource, "server")
        assert.deepStrictEqual(result.attempts.map((attempt) => attempt.status), ["timeout", "timeout"])
        // The personal attempt's notice was held (the server route was pending); the server attempt's is plain.
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.StreamTimeout({ provider: "scripted", phase: "first_token" })])
      })))

  it.effect("[72] spec §4: a stream timeout on the personal key alone shows the personal variant", () =>
    withRoutes({ script: () => [S.hang], fake: { personalKey: PERSONAL, userByokMode: true }, models: ["only"] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.credentialSource, "personal")
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.StreamTimeout({ provider: "scripted", phase: "first_token", personalKey: true })])
      })))

  it.effect("[72] a personal key the provider refuses (401): the user is told privately, once per turn; the server route follows admission", () =>
    withRoutes({
      script: ({ request }) => (keyOf(request) === PERSONAL ? [refused] : S.reply("server answered")),
      fake: { personalKey: PERSONAL }
    }, ({ collected, recorded }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.text, "server answered")
        assert.deepStrictEqual(yield* recorded.personalKeyRefused, [401], "two refused attempts, one private notice")
        // Nothing about the key's refusal is said in the channel beyond the fallback notice.
        assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["FallbackUsed"])
      })))

  it.effect("[72] no server key set: the operator's pool is the server route (keys rotate and rest in the KeyPool); source operator", () =>
    withRoutes({
      script: ({ request }) => (keyOf(request) === "op-1" ? S.reply("pool answered") : [rateLimited]),
      fake: { personalKey: PERSONAL, serverKey: "none" },
      models: ["only"]
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.credentialSource, "operator")
        assert.deepStrictEqual((yield* (yield* ScriptedProbe).requests).map(keyOf), [PERSONAL, "op-0", "op-1"])
        assert.deepStrictEqual([...(yield* (yield* KeyPool).snapshot).keys()], [0], "the personal key's 429 rested no pool key")
      })))
})

describe("[72] the planned server route (no personal key): admitted before any attempt", () => {
  it.effect("a refusal means no attempt at all: status skipped, the user is told", () =>
    withRoutes({ script: () => S.reply("server answered"), fake: {}, limits: { userDailyTurnQuota: 1 } }, ({ collected, recorded }) =>
      Effect.gen(function*() {
        const first = yield* runGenerationTurn()
        assert.strictEqual(first.credentialSource, "server")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [0], "the server route is the plan: prepared up front")
        const second = yield* runGenerationTurn()
        assert.strictEqual(second.status, "skipped")
        assert.deepStrictEqual(second.attempts, [])
        assert.strictEqual((yield* (yield* ScriptedProbe).requests).length, 1)
        assert.deepStrictEqual((yield* collected.notices).at(-1), UserNotice.ServerRouteRefused({ reason: "user_quota", retryAfterMs: undefined }))
      })))

  it.effect("under user_byok_mode a user without a key gets no attempt, and is told to bring one", () =>
    withRoutes({ script: () => S.reply("never"), fake: { userByokMode: true } }, ({ collected, recorded }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "skipped")
        assert.deepStrictEqual(yield* recorded.materializedAfter, [])
        assert.strictEqual((yield* (yield* ScriptedProbe).requests).length, 0)
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.ServerRouteRefused({ reason: "user_byok_mode", retryAfterMs: undefined })])
      })))

  it.effect("the usage ledger records each turn that reached the provider under its final source, with the summed usage", () =>
    withRoutes({
      script: ({ request }) => (keyOf(request) === PERSONAL ? [S.usage(5, 0), rateLimited] : [S.text("ok"), S.usage(10, 3), S.finish("stop")]),
      fake: { personalKey: PERSONAL },
      models: ["only"]
    }, () =>
      Effect.gen(function*() {
        yield* runGenerationTurn()
        const rows = yield* (yield* UsageLedgerStore).totals({ userId: "user-1" }, 1)
        // One turn, under the source that answered, with every attempt's tokens (5 on the personal key, 13 on the server's).
        assert.deepStrictEqual(rows.map((row) => [row.source, row.turns, row.totalTokens]), [["server", 1, 18]])
      })))
})

describe("route policy (pure)", () => {
  it("withheld: impersonation, then user_byok_mode, then the opt-out", () => {
    const base = { personalKey: Option.none(), userByokMode: false, serverRouteOptOut: false, serverCredential: Effect.never, personalKeyRefused: () => Effect.void }
    assert.strictEqual(serverRouteWithheld(false, base), undefined)
    assert.strictEqual(serverRouteWithheld(true, { ...base, userByokMode: true }), "impersonation")
    assert.strictEqual(serverRouteWithheld(false, { ...base, userByokMode: true, serverRouteOptOut: true }), "user_byok_mode")
    assert.strictEqual(serverRouteWithheld(false, { ...base, serverRouteOptOut: true }), "opted_out")
  })

  it("a turn consumes quota unless it failed altogether", () => {
    assert.deepStrictEqual(
      (["completed", "stopped_by_user", "follow_up_interrupt", "empty_response", "error", "timeout", "skipped"] as const).map(consumesQuota),
      [true, true, true, true, false, false, false]
    )
  })
})
