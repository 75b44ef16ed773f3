import { Context, type Effect } from "effect"
import type { DeliveryError } from "../domain/DeliveryError"
import type { ToolActivity } from "./ToolActivity"
import type { UserNotice } from "./UserNotice"

export { DeliveryError } from "../domain/DeliveryError"

export interface ResponseSinkShape {
  readonly write: (delta: string) => Effect.Effect<void, DeliveryError>
  readonly endPass: (mode: "flush" | "discard") => Effect.Effect<string, DeliveryError>
  readonly delivered: Effect.Effect<string>
  readonly notice: (notice: UserNotice) => Effect.Effect<void>
  readonly capacity?: number
  readonly toolActivity?: (activity: ToolActivity) => Effect.Effect<void>
}

/**
 * Where reply text goes; the front decides. A pass writes deltas, then ends: `flush` delivers what
 * is buffered, `discard` drops it. `endPass` returns exactly the text delivered during the pass.
 */
export class ResponseSink extends Context.Service<ResponseSink, ResponseSinkShape>()("loopcord/loop/ResponseSink") {}
