import { Data } from "effect"
import { serviceFailureText } from "../domain/ToolFailureClass"

type MediaBackendFailure =
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
  /** The backend answered with a link the address policy refuses (a private or metadata address). */
  | "blocked_link"

/**
 * An image or speech backend failed. The message (backend and detail: a vendor's words, a
 * network error naming a host) is for the logs and the thought log; the model reads
 * `failureText` only, the kind of failure.
 */
export class MediaBackendError extends Data.TaggedError("MediaBackendError")<{
  readonly backend: string
  readonly reason: MediaBackendFailure
  readonly detail: string
  readonly status?: number
}> {
  override get message(): string {
    return `${this.backend}: ${this.detail}`
  }

  /** "the image service failed (5xx)", "the voice service is unreachable", … */
  failureText(service: string): string {
    switch (this.reason) {
      case "http_status":
        return serviceFailureText(service, { status: this.status ?? 500 })
      case "bad_response":
      case "wrong_media":
        return serviceFailureText(service, "bad_answer")
      case "too_large":
        return serviceFailureText(service, "too_large")
      case "unreachable":
        return serviceFailureText(service, "unreachable")
      case "timeout":
        return serviceFailureText(service, "timed_out")
      case "job_failed":
        return `the ${service} service failed (its job reported an error)`
      case "unsupported":
        return `the ${service} service cannot do that`
      case "blocked_link":
        return `the ${service} service returned a link that is not fetched`
    }
  }
}
