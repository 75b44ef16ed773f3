import { Effect, Ref } from "effect"
import type { ChatMessage } from "../../domain/ChatMessage"
import { type DraftState, type DraftTurn, type RevisionNote } from "./DraftState"

/** Told to the author while text it wrote earlier in the turn is held: the next pass continues it, never repeats it. */
export const PENDING_NARRATION_NOTE =
  "[Nothing you write is shown until your reply is complete and reviewed. The text you already wrote in this reply is held " +
  "and will be posted together with what you write now: continue from it, do not repeat it.]"

/** Told to the author after a reviewer asked for a revision: the feedback and the previous draft. */
const revisionInstruction = (revision: RevisionNote): string =>
  "[A reviewer read your draft reply before anyone saw it and asked for a revision; nothing of it was posted. " +
  "Write the complete reply again with the feedback applied. The tool results above are real and still valid: " +
  "do not call those tools again for what they already answered.]\n" +
  `Reviewer's feedback:\n<<<\n${revision.feedback}\n>>>\nYour previous draft:\n<<<\n${revision.draft}\n>>>`

const notesOf = (state: DraftState): ReadonlyArray<ChatMessage> => [
  ...(state.revision === undefined ? [] : [{ role: "user" as const, content: revisionInstruction(state.revision) }]),
  ...(state.parts.length === 0 ? [] : [{ role: "user" as const, content: PENDING_NARRATION_NOTE }])
]

/** The notes appended to the author's context for the next pass (none when nothing is held or revised). */
export const authorNotes = (draft: DraftTurn): Effect.Effect<ReadonlyArray<ChatMessage>> => Effect.map(Ref.get(draft.state), notesOf)
