import { Result, Schema } from "effect"

/**
 * The reviewer's answer protocol: exactly one JSON object,
 * `{"verdict":"approve"|"revise"|"cancel","feedback":"..."}`, optionally inside one ```json
 * fence. Extra keys are ignored; anything else (prose, a second object, a missing or unknown
 * verdict, `revise` without feedback) is garbage, and garbage means "not reviewed".
 */
export const VERDICT_PROTOCOL =
  'Answer with exactly one JSON object and nothing else: {"verdict":"approve"|"revise"|"cancel","feedback":"..."}. ' +
  '"feedback" is required for "revise" (say precisely what must change) and optional otherwise.'

/** Feedback longer than this is cut: it is replayed to the author, so it must stay bounded. */
const FEEDBACK_MAX_CHARS = 2_000

export interface ReviewVerdict {
  readonly verdict: "approve" | "revise" | "cancel"
  /** Trimmed and capped; empty when the reviewer gave none. */
  readonly feedback: string
}

const VerdictJson = Schema.Struct({
  verdict: Schema.Literals(["approve", "revise", "cancel"]),
  feedback: Schema.optional(Schema.String)
})

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(VerdictJson))

const FENCED = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i

/** Decodes the reviewer's whole answer; a failure says why it is garbage (for the operator notice). */
export const decodeVerdict = (answer: string): Result.Result<ReviewVerdict, string> => {
  const trimmed = answer.trim()
  const body = FENCED.exec(trimmed)?.[1]?.trim() ?? trimmed
  return Result.flatMap(
    Result.mapError(decodeJson(body), (error) => `not a verdict object: ${error.message.replace(/\s+/g, " ").slice(0, 200)}`),
    (decoded): Result.Result<ReviewVerdict, string> => {
      const feedback = (decoded.feedback ?? "").trim().slice(0, FEEDBACK_MAX_CHARS)
      if (decoded.verdict === "revise" && feedback.length === 0) return Result.fail("a revise verdict without feedback")
      return Result.succeed({ verdict: decoded.verdict, feedback })
    }
  )
}
