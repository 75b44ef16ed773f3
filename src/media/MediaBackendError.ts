import { Data } from "effect"

export type MediaBackendFailure =
  /** The backend answered 4xx/5xx. */
  | "http_status"
  /** The answer is not what the protocol promises (bad JSON, no image in it). */
  | "bad_response"
  /** The bytes are not the promised media type (not an image, not Ogg Opus). */
  | "wrong_media"
  | "too_large"
  | "unreachable"
  /** A ComfyUI job reported an error. */
  | "job_failed"
  | "timeout"
  /** The backend cannot run what was asked (stale config, a hand-written call). */
  | "unsupported"

/** An image or speech backend failed; the detail is for the model and the logs (no secrets). */
export class MediaBackendError extends Data.TaggedError("MediaBackendError")<{
  readonly backend: string
  readonly reason: MediaBackendFailure
  readonly detail: string
  readonly status?: number
}> {
  override get message(): string {
    return `${this.backend}: ${this.detail}`
  }
}
