import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { makeModelChoices, parseModelChain, effectiveChain } from "../../src/config/ModelChoiceConfig"
import { modelSuggestions } from "../../src/discord/commands/modelCommand"
import { avatarUrlProblem, personaUpdate } from "../../src/discord/commands/personaCommand"
import { serverAccess } from "../../src/discord/serverAccess"
import { serverPersona } from "../../src/discord/ServerGate"
import { MAX_TRACKED_USERS, UserRateLimiter } from "../../src/discord/UserRateLimiter"
import { defaultServerSettings, type ServerSettings } from "../../src/store/ServerSettingsStore"

const withAccess = (access: Partial<ServerSettings["access"]>, triggers: Partial<ServerSettings["triggers"]> = {}): ServerSettings => ({
  ...defaultServerSettings,
  access: { ...defaultServerSettings.access, ...access },
  triggers: { ...defaultServerSettings.triggers, ...triggers }
})

const author = (userId: string, roles: ReadonlyArray<string> = []) => ({ userId, roleIds: new Set(roles) })

describe("serverAccess (pure)", () => {
  it("the defaults let everyone in through every trigger", () => {
    for (const reason of ["mention", "reply", "enabled_channel", "dm"] as const) {
      assert.isUndefined(serverAccess(defaultServerSettings, reason, author("u1")))
    }
  })

  it("a trigger kind turned off is ignored; DMs are the operator's, never the server's", () => {
    const off = withAccess({}, { mentions: false, replies: false, channels: false })
    assert.strictEqual(serverAccess(off, "mention", author("u1")), "trigger_off")
    assert.strictEqual(serverAccess(off, "reply", author("u1")), "trigger_off")
    assert.strictEqual(serverAccess(off, "enabled_channel", author("u1")), "trigger_off")
    assert.isUndefined(serverAccess(withAccess({ deniedUsers: ["u1"] }, { mentions: false }), "dm", author("u1")))
  })

  it("deny lists win over the allow list; an allow list keeps out everyone without one of its roles", () => {
    const settings = withAccess({ allowedRoles: ["vip"], deniedRoles: ["muted"], deniedUsers: ["mallory"] })
    assert.strictEqual(serverAccess(settings, "mention", author("mallory", ["vip"])), "denied_user")
    assert.strictEqual(serverAccess(settings, "mention", author("bob", ["vip", "muted"])), "denied_role")
    assert.strictEqual(serverAccess(settings, "mention", author("carol")), "role_not_allowed")
    assert.isUndefined(serverAccess(settings, "mention", author("dave", ["vip"])))
  })
})

describe("UserRateLimiter (TestClock)", () => {
  it.effect("a sliding minute per user: beyond the rate refused, told once, admitted again as the window slides", () =>
    Effect.gen(function*() {
      const limiter = yield* UserRateLimiter
      assert.strictEqual((yield* limiter.admit("g:u", 2))._tag, "Admitted")
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* limiter.admit("g:u", 2))._tag, "Admitted")
      const third = yield* limiter.admit("g:u", 2)
      assert.deepStrictEqual(third, { _tag: "Refused", notify: true, retryAfterMs: 50_000 })
      const fourth = yield* limiter.admit("g:u", 2)
      assert.deepStrictEqual(fourth, { _tag: "Refused", notify: false, retryAfterMs: 50_000 })
      // Another user, and the same user in another server, have their own windows.
      assert.strictEqual((yield* limiter.admit("g:other", 2))._tag, "Admitted")
      assert.strictEqual((yield* limiter.admit("h:u", 2))._tag, "Admitted")
      // The first message leaves the window after 60 s: one more is admitted, and the next refusal is told again.
      yield* TestClock.adjust("50 seconds")
      assert.strictEqual((yield* limiter.admit("g:u", 2))._tag, "Admitted")
      const again = yield* limiter.admit("g:u", 2)
      assert.strictEqual(again._tag === "Refused" && again.notify, true)
      // 0 means no limit: nothing is tracked for it.
      for (let index = 0; index < 5; index++) assert.strictEqual((yield* limiter.admit("g:free", 0))._tag, "Admitted")
    }).pipe(Effect.provide(UserRateLimiter.Default)))

  it.effect("the users tracked stay bounded: idle ones are forgotten first", () =>
    Effect.gen(function*() {
      const limiter = yield* UserRateLimiter
      for (let index = 0; index < MAX_TRACKED_USERS; index++) yield* limiter.admit(`g:${index}`, 1)
      assert.strictEqual(yield* limiter.tracked, MAX_TRACKED_USERS)
      yield* TestClock.adjust("61 seconds")
      yield* limiter.admit("g:newcomer", 1)
      assert.strictEqual(yield* limiter.tracked, 1)
      for (let index = 0; index < MAX_TRACKED_USERS + 10; index++) yield* limiter.admit(`h:${index}`, 1)
      assert.isAtMost(yield* limiter.tracked, MAX_TRACKED_USERS)
    }).pipe(Effect.provide(UserRateLimiter.Default)), 20_000)
})

describe("model chains and personas (pure)", () => {
  const choices = makeModelChoices(["model-a"], ["model-b", "model-c"])

  it("a chain is trimmed, deduplicated, bounded and allowed", () => {
    assert.deepStrictEqual(parseModelChain(choices, " model-b , model-a,model-b "), Result.succeed(["model-b", "model-a"]))
    assert.isTrue(Result.isFailure(parseModelChain(choices, "model-b, gpt-x")))
    assert.isTrue(Result.isFailure(parseModelChain(choices, " , ")))
    const any = makeModelChoices(["model-a"], "*")
    assert.isTrue(Result.isSuccess(parseModelChain(any, "anything/at-all")))
    assert.isTrue(Result.isFailure(parseModelChain(any, "a,b,c,d,e,f")))
    assert.isTrue(Result.isFailure(parseModelChain(any, "x".repeat(201))))
    // A stored model the operator no longer allows is dropped; none left: the defaults.
    assert.deepStrictEqual(effectiveChain(choices, ["gone", "model-c"]), ["model-c"])
    assert.isUndefined(effectiveChain(choices, ["gone"]))
  })

  it("autocomplete completes the last model of the list and never repeats one", () => {
    assert.deepStrictEqual(modelSuggestions(choices, "").map((choice) => choice.value), ["model-b", "model-c", "model-a"])
    assert.deepStrictEqual(modelSuggestions(choices, "model-b, c").map((choice) => choice.value), ["model-b, model-c"])
    assert.isTrue(modelSuggestions(choices, `${"y".repeat(99)}, model`).every((choice) => choice.value.length <= 100))
  })

  it("a persona avatar is an https URL; fields left out keep their value; bounds hold", () => {
    assert.isUndefined(avatarUrlProblem("https://cdn.example/a.png"))
    assert.isString(avatarUrlProblem("http://cdn.example/a.png"))
    assert.isString(avatarUrlProblem("https://user:pw@cdn.example/a.png"))
    assert.isString(avatarUrlProblem("javascript:alert(1)"))
    const current = { name: "Old", avatarUrl: undefined, systemPrompt: "Old prompt" }
    assert.deepStrictEqual(personaUpdate(current, { name: null, avatar: null, prompt: " New prompt " }), { name: "Old", avatarUrl: undefined, systemPrompt: "New prompt" })
    assert.strictEqual((personaUpdate(current, { name: "x".repeat(81), avatar: null, prompt: null }) as { _tag?: string })._tag, "CommandError")
    const base = { id: undefined, name: "loopcord", avatarUrl: "https://operator/a.png", systemPrompt: "Operator prompt" }
    assert.deepStrictEqual(serverPersona(base, { ...defaultServerSettings, persona: { name: "Nerine", avatarUrl: undefined, systemPrompt: undefined } }), {
      ...base,
      name: "Nerine"
    })
  })
})
