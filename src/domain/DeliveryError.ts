import { Data } from "effect"

/**
 * The destination refused the reply for good (docs/architecture.md, Delivery). The sink raises it only
 * after it continued what it could (a refused edit goes on in a new message) and retried what
 * was transient: when it reaches the loop, nothing more can be shown, so the turn ends with
 * status `error`, reason `delivery_failed`. `channel_deleted` / `missing_access` also tell the
 * outer tier that no other model could deliver either.
 */
export class DeliveryError extends Data.TaggedError("DeliveryError")<{
  readonly reason: "channel_deleted" | "missing_access" | "failed"
  readonly detail: string
}> {}
