import type { PassResult, ThoughtLogPayload, TurnStatus } from "../domain/PassResult"
import type { Sticker } from "../domain/Sticker"
import { addUsage, type TokenUsage } from "../domain/TokenUsage"
import type { AttemptResult, ToolCallRecord } from "../domain/TurnResult"

export interface BuildResultInput {
  readonly status: TurnStatus
  /** Raw text of the terminating pass (continuation prefix included); trimmed here. */
  readonly responseText: string
  /** Hidden scene metadata: NovelAI `<details>` bodies merged over the passes. */
  readonly details?: string
  readonly passes: ReadonlyArray<PassResult>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  readonly toolResponseDelivered: boolean
  readonly thoughtLog: ThoughtLogPayload | undefined
  readonly stickerSelection: Sticker | null | undefined
}

/**
 * The text of a result: the trimmed response, then `[Scene Metadata]` and the
 * details when there are any. Decided: the reference does not trim the
 * combined string, so details alone give "\n\n[Scene Metadata]\n…"; we trim it, so an answer
 * never starts with blank lines ("[Scene Metadata]\n…").
 */
export const resultText = (responseText: string, details: string | undefined): string => {
  const text = responseText.trim()
  const scene = details?.trim() ?? ""
  return scene.length === 0 ? text : `${text}\n\n[Scene Metadata]\n${scene}`.trim()
}

/** A pass's scene metadata joins what earlier passes brought, separated by a blank line. */
export const mergeDetails = (existing: string, next: string | undefined): string =>
  next === undefined || next.trim().length === 0 ? existing : existing.length === 0 ? next : `${existing}\n\n${next}`

/** Turn usage is the sum of the passes' usage (each pass reports its latest). */
const sumUsage = (passes: ReadonlyArray<PassResult>): TokenUsage | undefined =>
  passes.reduce<TokenUsage | undefined>((total, pass) => addUsage(total, pass.usage), undefined)

/** Assembles the AttemptResult runToolLoop returns. */
export const buildResult = (input: BuildResultInput): AttemptResult => ({
  status: input.status,
  text: resultText(input.responseText, input.details),
  passes: input.passes,
  toolCalls: input.toolCalls,
  usage: sumUsage(input.passes),
  toolResponseDelivered: input.toolResponseDelivered,
  ...(input.thoughtLog === undefined ? {} : { thoughtLog: input.thoughtLog }),
  // A sticker goes out only with a reply that completed (never after /kill, a follow-up or a cap).
  ...(input.status !== "completed" || input.stickerSelection === undefined || input.stickerSelection === null
    ? {}
    : { stickerSelection: input.stickerSelection }),
  ...(input.passes.at(-1)?._tag === "DeliveryFailed" ? { reason: "delivery_failed" as const } : {})
})

/**
 * What the loop's hooks add to a result: the tokens they spent count toward the attempt, and an
 * answer the destination refused when a hook delivered it makes the `error` turn `delivery_failed`.
 */
export const withHookOutcome = (result: AttemptResult, spent: TokenUsage | undefined, refused: boolean): AttemptResult => ({
  ...result,
  usage: addUsage(result.usage, spent),
  ...(refused ? { reason: "delivery_failed" as const } : {})
})
