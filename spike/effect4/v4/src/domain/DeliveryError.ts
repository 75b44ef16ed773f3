import { Data } from "effect"

/** The destination refused the reply for good: nothing more can be shown. */
export class DeliveryError extends Data.TaggedError("DeliveryError")<{
  readonly reason: "channel_deleted" | "missing_access" | "failed"
  readonly detail: string
}> {}
