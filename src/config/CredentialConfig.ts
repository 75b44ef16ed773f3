import { Config, Context, Result, Layer, Option, Redacted } from "effect"
import { intSetting } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/**
 * Who may spend the server's key and how the stored keys are sealed:
 * cooldown and daily quotas of server-paid turns, and the secret keys for secrets at rest.
 */
export interface CredentialSettings {
  /** `SERVER_MESSAGE_COOLDOWN_MS`: the least time between two server-paid turns of one user in one server (0 = off). */
  readonly serverMessageCooldownMs: number
  /** `SERVER_DAILY_TURN_QUOTA`: server-paid turns per server per UTC day (0 = unlimited). */
  readonly serverDailyTurnQuota: number
  /** `USER_DAILY_TURN_QUOTA`: server-paid turns per user per server per UTC day (0 = unlimited). */
  readonly userDailyTurnQuota: number
  /** `LOOPCORD_SECRET_KEY`: the AES-256 key secrets are sealed with (32 bytes); none ⇒ no secret can be stored. */
  readonly secretKey: Option.Option<Redacted.Redacted<Uint8Array>>
  /** `LOOPCORD_SECRET_KEY_PREVIOUS`: the key being rotated out; what it sealed is re-sealed on first read. */
  readonly previousSecretKey: Option.Option<Redacted.Redacted<Uint8Array>>
}

const defaultCredentialSettings: CredentialSettings = {
  serverMessageCooldownMs: 0,
  serverDailyTurnQuota: 0,
  userDailyTurnQuota: 0,
  secretKey: Option.none(),
  previousSecretKey: Option.none()
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/

/** A 32-byte key in base64 (standard or URL-safe alphabet, padding optional), or why not. */
export const decodeSecretKey = (raw: string): Result.Result<Uint8Array, string> => {
  const text = raw.trim().replace(/-/g, "+").replace(/_/g, "/")
  if (text.length === 0) return Result.fail("is empty")
  if (!BASE64.test(text)) return Result.fail("is not base64")
  const bytes = Buffer.from(text, "base64")
  return bytes.length === 32
    ? Result.succeed(new Uint8Array(bytes))
    : Result.fail(`must be 32 bytes in base64 (got ${bytes.length} bytes); make one with: openssl rand -base64 32`)
}

const secretKeySetting = (name: string): Config.Config<Option.Option<Redacted.Redacted<Uint8Array>>> =>
  Config.option(Config.Redacted(name)).pipe(
    mapOrFail((value) => {
      if (Option.isNone(value)) return Result.succeed(Option.none())
      const raw = Redacted.value(value.value)
      if (raw.trim().length === 0) return Result.succeed(Option.none())
      return Result.match(decodeSecretKey(raw), {
        onFailure: (problem) => Result.fail(invalidSetting(name, problem)),
        onSuccess: (bytes) => Result.succeed(Option.some(Redacted.make(bytes)))
      })
    })
  )

const fromEnv: Config.Config<CredentialSettings> = Config.all({
  serverMessageCooldownMs: intSetting("SERVER_MESSAGE_COOLDOWN_MS", { default: 0, min: 0 }),
  serverDailyTurnQuota: intSetting("SERVER_DAILY_TURN_QUOTA", { default: 0, min: 0 }),
  userDailyTurnQuota: intSetting("USER_DAILY_TURN_QUOTA", { default: 0, min: 0 }),
  secretKey: secretKeySetting("LOOPCORD_SECRET_KEY"),
  previousSecretKey: secretKeySetting("LOOPCORD_SECRET_KEY_PREVIOUS")
}).pipe(
  mapOrFail((settings) =>
    Option.isSome(settings.previousSecretKey) && Option.isNone(settings.secretKey)
      ? Result.fail(invalidSetting("LOOPCORD_SECRET_KEY_PREVIOUS", "is set but LOOPCORD_SECRET_KEY is not: set the new key too, so old secrets can be re-sealed"
      ))
      : Result.succeed(settings)
  )
)

export class CredentialConfig extends Context.Service<CredentialConfig, CredentialSettings>()("loopcord/config/CredentialConfig") {
  static readonly layer = Layer.effect(CredentialConfig, fromEnv)
  /** Defaults with overrides, for tests and embedding. */
  static readonly make = (overrides: Partial<CredentialSettings> = {}) =>
    Layer.succeed(CredentialConfig, { ...defaultCredentialSettings, ...overrides })
}
