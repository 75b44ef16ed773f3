import type { Sticker } from "../domain/Sticker"
import type { ToolResult } from "../domain/ToolResult"
import type { TurnEffectKind } from "../domain/TurnEffect"

/** What one tool call changes about the reply; `undefined` leaves an earlier choice alone. */
export interface AppliedTurnEffects {
  /** The sticker sent with the reply, or `null` to clear an earlier pick. */
  readonly stickerSelection: Sticker | null | undefined
}

/** A call of a tool that declares no turn effect, or one that never ran to a result of its own. */
export const noTurnEffects: AppliedTurnEffects = { stickerSelection: undefined }

/**
 * The turn effects of a call of a tool declaring `declared` (Tool.turnEffect): the effect its
 * result carries, or a clear when it carries none (a miss, a failure, a timeout).
 */
export const appliedTurnEffects = (declared: TurnEffectKind | undefined, result: ToolResult): AppliedTurnEffects => {
  if (declared === undefined) return noTurnEffects
  const effect = result.success ? result.turnEffect : undefined
  switch (declared) {
    case "StickerSelected":
      return { stickerSelection: effect?._tag === "StickerSelected" ? effect.sticker : null }
  }
}
