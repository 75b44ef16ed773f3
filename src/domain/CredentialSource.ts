/**
 * Who pays for a turn's provider calls:
 * - `personal`: the user's own key (`/key personal`);
 * - `server`: the key a server admin set (`/key server`);
 * - `operator`: the bot operator's pool (`LLM_API_KEYS`), the default when neither exists.
 * `server` and `operator` are both server-paid: the user did not bring the key.
 */
export type CredentialSource = "personal" | "server" | "operator"

export const CREDENTIAL_SOURCES: ReadonlyArray<CredentialSource> = ["personal", "server", "operator"]
