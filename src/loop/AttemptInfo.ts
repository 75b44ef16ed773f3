/** The generation attempt a pass belongs to (one model × one API key). */
export interface AttemptInfo {
  /** Provider family name (`LanguageModel.name`). */
  readonly provider: string
  readonly model: string
  /** Another key or model will retry on failure, so user-facing error notices stay quiet. */
  readonly suppressUserErrors: boolean
}
