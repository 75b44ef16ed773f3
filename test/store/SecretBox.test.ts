import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Result, Option, Redacted } from "effect"
import { CredentialConfig, decodeSecretKey } from "../../src/config/CredentialConfig"
import { describeFailure } from "../../src/config/startupError"
import { isSealed, makeSecretBox, SecretBox } from "../../src/store/SecretBox"

const keyA = new Uint8Array(32).fill(1)
const keyB = new Uint8Array(32).fill(2)
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

const readSettings = (env: Record<string, string>) =>
  Effect.flatMap(CredentialConfig, Effect.succeed).pipe(
    Effect.provide(CredentialConfig.layer),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)),
    Effect.mapError((error) => describeFailure(Cause.fail(error))),
    Effect.result
  )

describe("SecretBox (AES-256-GCM under LOOPCORD_SECRET_KEY)", () => {
  it.effect("seals so that nothing of the secret shows, with a fresh IV every time, and opens it back", () =>
    Effect.gen(function*() {
      const box = makeSecretBox({ current: keyA })
      const secret = "sk-live-0123456789abcdef"
      const first = yield* box.seal(secret, "credential_keys/user/u1")
      const second = yield* box.seal(secret, "credential_keys/user/u1")
      assert.isTrue(isSealed(first))
      assert.notInclude(first, secret)
      assert.notInclude(Buffer.from(first.split(".").at(-1) ?? "", "base64url").toString("latin1"), secret)
      assert.notStrictEqual(first, second, "a fresh IV per seal")
      const opened = yield* box.open(first, "credential_keys/user/u1")
      assert.strictEqual(Redacted.value(opened.plain), secret)
      assert.isTrue(Option.isNone(opened.resealed))
    }))

  it.effect("a sealed secret opens only in its own context, only untampered, only under a key it was sealed with", () =>
    Effect.gen(function*() {
      const box = makeSecretBox({ current: keyA })
      const sealed = yield* box.seal("header-value", "guild_mcp_servers/g1/search")
      assert.strictEqual((yield* Effect.flip(box.open(sealed, "guild_mcp_servers/g2/search"))).reason, "corrupt", "moved to another row")
      const payload = Buffer.from(sealed.split(".").at(-1) ?? "", "base64url")
      payload[payload.length - 1] = (payload[payload.length - 1] ?? 0) ^ 1
      const tampered = `${sealed.slice(0, sealed.lastIndexOf(".") + 1)}${payload.toString("base64url")}`
      assert.strictEqual((yield* Effect.flip(box.open(tampered, "guild_mcp_servers/g1/search"))).reason, "corrupt")
      assert.strictEqual((yield* Effect.flip(box.open("lcs1.garbage", "x"))).reason, "corrupt")
      const other = makeSecretBox({ current: keyB })
      const error = yield* Effect.flip(other.open(sealed, "guild_mcp_servers/g1/search"))
      assert.strictEqual(error.reason, "unknown_key")
      assert.notInclude(error.message, "header-value")
    }))

  it.effect("rotation: with the old key as LOOPCORD_SECRET_KEY_PREVIOUS an old secret opens and comes back re-sealed under the new key", () =>
    Effect.gen(function*() {
      const sealedOld = yield* makeSecretBox({ current: keyA }).seal("rotate-me", "ctx")
      const rotating = makeSecretBox({ current: keyB, previous: keyA })
      const opened = yield* rotating.open(sealedOld, "ctx")
      assert.strictEqual(Redacted.value(opened.plain), "rotate-me")
      assert.isTrue(Option.isSome(opened.resealed))
      const resealed = Option.getOrThrow(opened.resealed)
      // The re-sealed value opens under the new key alone; the old one no longer does there.
      const newOnly = makeSecretBox({ current: keyB })
      assert.strictEqual(Redacted.value((yield* newOnly.open(resealed, "ctx")).plain), "rotate-me")
      assert.strictEqual((yield* Effect.flip(newOnly.open(sealedOld, "ctx"))).reason, "unknown_key")
      // A value already under the current key needs no re-seal.
      assert.isTrue(Option.isNone((yield* rotating.open(resealed, "ctx")).resealed))
    }))

  it.effect("without LOOPCORD_SECRET_KEY nothing is sealed and nothing opens", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      assert.isFalse(box.canSeal)
      assert.strictEqual((yield* Effect.flip(box.seal("x", "ctx")))._tag, "SecretKeyMissingError")
      assert.strictEqual((yield* Effect.flip(box.open("lcs1.a.b", "ctx"))).reason, "no_key")
    }).pipe(Effect.provide(SecretBox.unkeyed)))
})

describe("LOOPCORD_SECRET_KEY / LOOPCORD_SECRET_KEY_PREVIOUS and the quota settings", () => {
  it("a key is 32 bytes of base64 (standard or URL-safe, padding optional)", () => {
    const bytes = new Uint8Array(32).map((_, index) => index * 7 + 250)
    const standard = base64(bytes)
    for (const form of [standard, standard.replace(/=+$/, ""), Buffer.from(bytes).toString("base64url"), ` ${standard}\n`]) {
      const decoded = decodeSecretKey(form)
      assert.isTrue(Result.isSuccess(decoded), form)
      if (Result.isSuccess(decoded)) assert.deepStrictEqual([...decoded.success], [...bytes])
    }
    assert.include(Result.getFailure(decodeSecretKey(base64(new Uint8Array(16)))).pipe(Option.getOrElse(() => "")), "got 16 bytes")
    assert.isTrue(Result.isFailure(decodeSecretKey("not base64 at all!")))
  })

  it.effect("a malformed key fails start-up with one line naming the variable and never the value; the previous key needs a current one", () =>
    Effect.gen(function*() {
      for (const [name, value] of [["LOOPCORD_SECRET_KEY", "c2hvcnQtc2VjcmV0"], ["LOOPCORD_SECRET_KEY_PREVIOUS", "###"]] as const) {
        const result = yield* readSettings({ LOOPCORD_SECRET_KEY: base64(keyA), [name]: value })
        assert.isTrue(Result.isFailure(result), name)
        if (Result.isFailure(result)) {
          assert.include(result.failure, name)
          assert.notInclude(result.failure, "\n")
          assert.notInclude(result.failure, value)
        }
      }
      const orphan = yield* readSettings({ LOOPCORD_SECRET_KEY_PREVIOUS: base64(keyA) })
      assert.isTrue(Result.isFailure(orphan) && orphan.failure.includes("LOOPCORD_SECRET_KEY_PREVIOUS"))
    }))

  it.effect("defaults: no key, no cooldown, no quotas; values are read as integers (a negative one is 0)", () =>
    Effect.gen(function*() {
      const defaults = yield* readSettings({})
      assert.isTrue(Result.isSuccess(defaults))
      if (Result.isSuccess(defaults)) {
        assert.isTrue(Option.isNone(defaults.success.secretKey))
        assert.deepStrictEqual(
          [defaults.success.serverMessageCooldownMs, defaults.success.serverDailyTurnQuota, defaults.success.userDailyTurnQuota],
          [0, 0, 0]
        )
      }
      const set = yield* readSettings({
        SERVER_MESSAGE_COOLDOWN_MS: "1500",
        SERVER_DAILY_TURN_QUOTA: "200",
        USER_DAILY_TURN_QUOTA: "-3",
        LOOPCORD_SECRET_KEY: base64(keyA),
        LOOPCORD_SECRET_KEY_PREVIOUS: base64(keyB)
      })
      assert.isTrue(Result.isSuccess(set))
      if (Result.isSuccess(set)) {
        assert.deepStrictEqual([set.success.serverMessageCooldownMs, set.success.serverDailyTurnQuota, set.success.userDailyTurnQuota], [1500, 200, 0])
        assert.deepStrictEqual([...Redacted.value(Option.getOrThrow(set.success.secretKey))], [...keyA])
        assert.deepStrictEqual([...Redacted.value(Option.getOrThrow(set.success.previousSecretKey))], [...keyB])
      }
      const bad = yield* readSettings({ SERVER_DAILY_TURN_QUOTA: "lots" })
      assert.isTrue(Result.isFailure(bad) && bad.failure.includes("SERVER_DAILY_TURN_QUOTA"))
    }))
})
