import type { CredentialSource } from "../domain/CredentialSource"

/** The generation attempt a pass belongs to (one model × one API key). */
export interface AttemptInfo {
  readonly provider: string
  readonly model: string
  readonly suppressUserErrors: boolean
  readonly credentialSource: CredentialSource
}

/** The fields a timeout notice adds for an attempt on the user's own key. */
export const personalVariant = (attempt: AttemptInfo): { readonly personalKey?: true } =>
  attempt.credentialSource === "personal" ? { personalKey: true } : {}
