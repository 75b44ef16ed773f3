import { Effect, Ref } from "effect"
import type { ResponseSink } from "../ResponseSink"
import { type DraftState, type DraftTurn, HELD_PROSE_MAX_CHARS } from "./DraftState"

/** Adds a delta to the pass being held, up to the turn's ceiling (the rest is dropped, marked cut). */
const holdDelta = (state: DraftState, delta: string): DraftState => {
  const room = Math.max(0, HELD_PROSE_MAX_CHARS - state.heldChars)
  const kept = delta.length <= room ? delta : delta.slice(0, room)
  return {
    ...state,
    passText: state.passText + kept,
    heldChars: state.heldChars + kept.length,
    cut: state.cut || kept.length < delta.length
  }
}

/**
 * The ResponseSink a pass streams into while drafting is on: text is held, never shown.
 * `endPass` returns what the pass wrote (its `accumulatedText`: held, not delivered; the
 * loop decides whether it joins the pending reply). Notices and tool activity still go to the
 * real sink. `delivered` is the text held in the current pass, which is all streamOnce reads
 * it for (what a pass produced since it began).
 */
export const holdingSink = (draft: DraftTurn, real: ResponseSink["Service"]): ResponseSink["Service"] => ({
  write: (delta) => Ref.update(draft.state, (state) => holdDelta(state, delta)),
  endPass: (mode) =>
    Ref.modify(draft.state, (state) => [
      mode === "flush" ? state.passText : "",
      { ...state, passText: "", heldChars: mode === "flush" ? state.heldChars : state.heldChars - state.passText.length }
    ]),
  delivered: Effect.map(Ref.get(draft.state), (state) => state.passText),
  // A held reply is shown later where the real sink shows it: no pass needs to stream more.
  ...(real.capacity === undefined ? {} : { capacity: real.capacity }),
  notice: real.notice,
  ...(real.toolActivity === undefined ? {} : { toolActivity: real.toolActivity })
})

/** A pass's held text joins the pending reply (blank text adds nothing). */
export const keepProse = (draft: DraftTurn, text: string): Effect.Effect<void> =>
  text.trim().length === 0 ? Effect.void : Ref.update(draft.state, (state) => ({ ...state, parts: [...state.parts, text] }))

/** A pass whose text is not kept (failed, stopped): its characters no longer count. */
export const dropProse = (draft: DraftTurn, text: string): Effect.Effect<void> =>
  Ref.update(draft.state, (state) => ({ ...state, heldChars: Math.max(0, state.heldChars - text.length) }))

/** The pending reply is thrown away (cancel, stop, follow-up, revision). */
export const discardPending = (draft: DraftTurn): Effect.Effect<void> =>
  Ref.update(draft.state, (state) => ({ ...state, parts: [], passText: "", heldChars: 0, cut: false }))
