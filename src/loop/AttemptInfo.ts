import type { CredentialSource } from "../domain/CredentialSource"

/** The generation attempt a pass belongs to (one model × one API key). */
export interface AttemptInfo {
  /** Provider family name (`LanguageModel.name`). */
  readonly provider: string
  readonly model: string
  /** Another key or model will retry on failure, so user-facing error notices stay quiet. */
  readonly suppressUserErrors: boolean
  /** Whose key the attempt runs on (the timeout notice has a personal variant). */
  readonly credentialSource: CredentialSource
}

/** The fields a timeout notice adds for an attempt on the user's own key. */
export const personalVariant = (attempt: AttemptInfo): { readonly personalKey?: true } =>
  attempt.credentialSource === "personal" ? { personalKey: true } : {}
