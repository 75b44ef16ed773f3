import { Context, type Effect } from "effect"
import type { DeliveryError } from "../domain/DeliveryError"
import type { ToolActivity } from "./ToolActivity"
import type { UserNotice } from "./UserNotice"

export { DeliveryError } from "../domain/DeliveryError"

/**
 * Where reply text goes; the front decides (Discord messages, terminal, a JSON report).
 * A pass writes deltas, then ends: `flush` delivers what is buffered, `discard` drops it (follow-up
 * interrupt). `endPass` returns exactly the text delivered during the pass: that is the pass's
 * `accumulatedText`.
 */
export class ResponseSink extends Context.Service<ResponseSink, {
  readonly write: (delta: string) => Effect.Effect<void, DeliveryError>
  readonly endPass: (mode: "flush" | "discard") => Effect.Effect<string, DeliveryError>
  /** All text delivered so far in this turn, across passes and attempts. */
  readonly delivered: Effect.Effect<string>
  readonly notice: (notice: UserNotice) => Effect.Effect<void>
  /**
   * Optional: the most reply text one turn can show here, in characters (Discord: its messages
   * per turn × 2000, and a margin). A provider that streams more is stopped there and the reply
   * is cut with a marker. Unset: 1 MiB, as in the terminal.
   */
  readonly capacity?: number
  /** Optional: tool calls as they start and end (the terminal shows them as status lines). */
  readonly toolActivity?: (activity: ToolActivity) => Effect.Effect<void>
}>()("loopcord/loop/ResponseSink") {}
