import { Effect } from "effect"
import type { AttemptInfo } from "./AttemptInfo"

/** Reply text one turn may show when the destination declares no capacity: 1 MiB. */
export const DEFAULT_REPLY_CAPACITY = 1_048_576

/** Shown after a reply cut at the destination's capacity. */
export const REPLY_CUT_MARKER = "\n\n✂ reply cut: it was longer than can be shown here"

export const reasoningCutMarker = (kept: number): string =>
  `\n[reasoning cut after ${kept} characters: the provider streamed more than a pass keeps]`

/** Why a pass stopped reading before its stream ended. */
export type PassCut = "reasoning" | "reply"

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** The first `room` characters of `text`, never ending inside a surrogate pair. */
export const headOf = (text: string, room: number): string => {
  if (room <= 0) return ""
  if (text.length <= room) return text
  return isHighSurrogate(text.charCodeAt(room - 1)) ? text.slice(0, room - 1) : text.slice(0, room)
}

/** Reasoning with one more piece, within `cap` characters. */
export const addReasoning = (kept: string, piece: string, cap: number): { readonly text: string; readonly cut: boolean } => {
  if (kept.length + piece.length <= cap) return { text: kept + piece, cut: false }
  const text = kept + headOf(piece, cap - kept.length)
  return { text: text + reasoningCutMarker(text.length), cut: true }
}

/** The operator hears of a pass stopped at a cap. */
export const logPassCut = (cut: PassCut, attempt: AttemptInfo): Effect.Effect<void> =>
  Effect.logWarning(
    cut === "reply"
      ? "the provider streamed more reply text than the destination can show: the reply is cut and the stream stopped"
      : "the provider streamed more reasoning than a pass keeps: the reasoning is cut and the stream stopped"
  ).pipe(Effect.annotateLogs({ provider: attempt.provider, model: attempt.model, cut }))
