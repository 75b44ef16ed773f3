import { Effect, Layer, Option } from "effect"
import { CredentialConfig } from "../config/CredentialConfig"

/** The one start-up line of a Discord front that cannot store secrets. */
const secretKeyMissingLine =
  "LOOPCORD_SECRET_KEY is not set: /key, guild MCP headers and guild MCP URLs with a secret path or query will be refused (secrets are only stored sealed); make a key with: openssl rand -base64 32"

/**
 * Says at start-up, once, that this bot will refuse to store secrets, so an operator learns it
 * from the log and not from a user whose `/key` was refused.
 */
export const secretKeyNotice: Layer.Layer<never, never, CredentialConfig> = Layer.effectDiscard(
  Effect.flatMap(CredentialConfig, (settings) =>
    Option.isNone(settings.secretKey) ? Effect.logWarning(secretKeyMissingLine) : Effect.void)
)
