import type { ContextReport } from "./ContextReport"
import type { CredentialSource } from "./CredentialSource"
import type { ToolArgs } from "./FunctionCall"
import type { PassResult, ThoughtLogPayload, TurnStatus } from "./PassResult"
import type { Sticker } from "./Sticker"
import type { TokenUsage } from "./TokenUsage"

/** One tool call of a turn, as the `--once --json` report shows it (docs/architecture.md, Public contracts). */
export interface ToolCallRecord {
  readonly name: string
  readonly args: ToolArgs | undefined
  readonly success: boolean
  /** The exact function-response payload replayed to the model (null for a context restart). */
  readonly response: unknown
  readonly durationMs: number
}

/** Why an `error` turn failed when it was not the model's doing: the reply could not be delivered. */
type TurnFailureReason = "delivery_failed"

/** The result of one generation attempt (one model × one key): what runToolLoop returns. */
export interface AttemptResult {
  readonly status: TurnStatus
  /** Trimmed text of the terminating pass (plus scene metadata); earlier passes' text is in their history entries. */
  readonly text: string
  readonly passes: ReadonlyArray<PassResult>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  readonly usage: TokenUsage | undefined
  readonly toolResponseDelivered: boolean
  readonly thoughtLog?: ThoughtLogPayload
  readonly stickerSelection?: Sticker
  readonly reason?: TurnFailureReason
  /** What the context budget did (absent when the attempt asked no model). */
  readonly context?: ContextReport
}

/** One attempt of the outer tier, for the report. */
export interface AttemptRecord {
  readonly model: string
  readonly keyIndex: number
  readonly status: TurnStatus
}

/** The result of a whole turn across fallbacks and key rotation (runGenerationTurn). */
export interface TurnResult {
  readonly status: TurnStatus
  /** Everything the user was shown as the reply, across attempts (continuations included). */
  readonly text: string
  /** Provider passes across all attempts. */
  readonly iterations: number
  readonly attempts: ReadonlyArray<AttemptRecord>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  readonly usage: TokenUsage | undefined
  readonly toolResponseDelivered: boolean
  readonly thoughtLog?: ThoughtLogPayload
  readonly stickerSelection?: Sticker
  /** Set on an `error` turn whose reply Discord (or another front) refused for good. */
  readonly reason?: TurnFailureReason
  /**
   * Whose key paid for the turn: the source of its last route (it switches from `personal` to the
   * server route's when that route took over). Absent when no route was chosen.
   */
  readonly credentialSource?: CredentialSource
  /** What the context budget did over the turn's attempts (absent when no model was asked). */
  readonly context?: ContextReport
}
