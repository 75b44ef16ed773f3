/** Who pays for a turn's provider calls. */
export type CredentialSource = "personal" | "server" | "operator"
