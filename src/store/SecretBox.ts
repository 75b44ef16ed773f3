import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { CredentialConfig } from "../config/CredentialConfig"

/**
 * Secrets at rest (personal and server API keys, guild MCP headers) are sealed with AES-256-GCM
 * under `LOOPCORD_SECRET_KEY`. Sealed text is `lcs1.<key id>.<base64url(iv ‖ ciphertext ‖ tag)>`:
 * the key id says which key sealed it (so a rotation knows what to re-seal), and each secret is
 * bound to where it is stored (the AAD `context`), so a sealed value copied into another row
 * does not open there.
 */
const SEALED_PREFIX = "lcs1."

const IV_BYTES = 12
const TAG_BYTES = 16

/** No `LOOPCORD_SECRET_KEY`: nothing can be sealed, so the secret is not stored. */
export class SecretKeyMissingError extends Data.TaggedError("SecretKeyMissingError")<{}> {
  override get message(): string {
    return "LOOPCORD_SECRET_KEY is not set: this bot cannot store secrets"
  }
}

/** A sealed secret that does not open; its value is never part of the error. */
export class SecretUnreadableError extends Data.TaggedError("SecretUnreadableError")<{
  /** `no_key`: nothing to open it with; `unknown_key`: sealed under neither configured key; `corrupt`: it does not authenticate. */
  readonly reason: "no_key" | "unknown_key" | "corrupt"
}> {
  override get message(): string {
    switch (this.reason) {
      case "no_key":
        return "a stored secret cannot be opened: LOOPCORD_SECRET_KEY is not set"
      case "unknown_key":
        return "a stored secret was sealed with a key that is neither LOOPCORD_SECRET_KEY nor LOOPCORD_SECRET_KEY_PREVIOUS"
      case "corrupt":
        return "a stored secret does not decrypt (damaged, or moved from another record)"
    }
  }
}

interface OpenedSecret {
  readonly plain: Redacted.Redacted<string>
  /** The same secret sealed under the current key, when it was sealed under the previous one: store it back. */
  readonly resealed: Option.Option<string>
}

export interface SecretBoxShape {
  /** Whether `LOOPCORD_SECRET_KEY` is set (otherwise `seal` always fails). */
  readonly canSeal: boolean
  readonly seal: (plain: string, context: string) => Effect.Effect<string, SecretKeyMissingError>
  readonly open: (sealed: string, context: string) => Effect.Effect<OpenedSecret, SecretUnreadableError>
}

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX)

interface BoxKey {
  readonly id: string
  readonly bytes: Uint8Array
}

const keyId = (bytes: Uint8Array): string =>
  createHash("sha256").update("loopcord/secret-key-id\0").update(bytes).digest("base64url").slice(0, 8)

const boxKey = (bytes: Uint8Array): BoxKey => ({ id: keyId(bytes), bytes })

const sealWith = (key: BoxKey, plain: string, context: string): string => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key.bytes, iv)
  cipher.setAAD(Buffer.from(context, "utf8"))
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
  return `${SEALED_PREFIX}${key.id}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url")}`
}

const openWith = (key: BoxKey, payload: Buffer, context: string) =>
  Effect.try({
    try: () => {
      if (payload.length < IV_BYTES + TAG_BYTES) throw new Error("too short")
      const decipher = createDecipheriv("aes-256-gcm", key.bytes, payload.subarray(0, IV_BYTES))
      decipher.setAAD(Buffer.from(context, "utf8"))
      decipher.setAuthTag(payload.subarray(payload.length - TAG_BYTES))
      const plain = Buffer.concat([decipher.update(payload.subarray(IV_BYTES, payload.length - TAG_BYTES)), decipher.final()])
      return plain.toString("utf8")
    },
    catch: () => new SecretUnreadableError({ reason: "corrupt" })
  })

/** A box over raw keys (`current` seals; `previous` only opens, for a rotation). */
export const makeSecretBox = (keys: { readonly current?: Uint8Array; readonly previous?: Uint8Array }): SecretBoxShape => {
  const current = keys.current === undefined ? undefined : boxKey(keys.current)
  const previous = keys.previous === undefined ? undefined : boxKey(keys.previous)

  const seal = (plain: string, context: string) =>
    current === undefined ? Effect.fail(new SecretKeyMissingError()) : Effect.sync(() => sealWith(current, plain, context))

  const open = (sealed: string, context: string): Effect.Effect<OpenedSecret, SecretUnreadableError> => {
    if (current === undefined) return Effect.fail(new SecretUnreadableError({ reason: "no_key" }))
    const [id, payload] = sealed.startsWith(SEALED_PREFIX) ? sealed.slice(SEALED_PREFIX.length).split(".", 2) : []
    if (id === undefined || payload === undefined) return Effect.fail(new SecretUnreadableError({ reason: "corrupt" }))
    const bytes = Buffer.from(payload, "base64url")
    if (id === current.id) {
      return Effect.map(openWith(current, bytes, context), (plain) => ({ plain: Redacted.make(plain), resealed: Option.none() }))
    }
    if (previous !== undefined && id === previous.id) {
      return Effect.map(openWith(previous, bytes, context), (plain) => ({
        plain: Redacted.make(plain),
        resealed: Option.some(sealWith(current, plain, context))
      }))
    }
    return Effect.fail(new SecretUnreadableError({ reason: "unknown_key" }))
  }

  return { canSeal: current !== undefined, seal, open }
}

export class SecretBox extends Context.Service<SecretBox, SecretBoxShape>()("loopcord/store/SecretBox") {
  /** Keys from `LOOPCORD_SECRET_KEY` / `LOOPCORD_SECRET_KEY_PREVIOUS`. */
  static readonly layerConfig: Layer.Layer<SecretBox, never, CredentialConfig> = Layer.effect(
    SecretBox,
    Effect.map(CredentialConfig, (settings) =>
      makeSecretBox({
        ...Option.match(settings.secretKey, { onNone: () => ({}), onSome: (key) => ({ current: Redacted.value(key) }) }),
        ...Option.match(settings.previousSecretKey, { onNone: () => ({}), onSome: (key) => ({ previous: Redacted.value(key) }) })
      }))
  )

  /** Explicit keys (tests). */
  static readonly make = (keys: { readonly current?: Uint8Array; readonly previous?: Uint8Array }) =>
    Layer.succeed(SecretBox, makeSecretBox(keys))

  /** No key: secrets are refused (what a bot without LOOPCORD_SECRET_KEY does). */
  static readonly unkeyed = Layer.succeed(SecretBox, makeSecretBox({}))

  /**
   * A random key that lives as long as the layer: for a database that lives no longer either
   * (`sqlite::memory:`, tests). Never for a database on disk: its secrets would not open after a restart.
   */
  static readonly ephemeral = Layer.sync(SecretBox, () => makeSecretBox({ current: new Uint8Array(randomBytes(32)) }))
}
