import { Context } from "effect"

/** Response Drafting's per-attempt state (stub: only its presence is read when drafting is off). */
export interface DraftAttempt {
  readonly reviewer: { readonly model: string }
}

export class DraftReview extends Context.Service<DraftReview, DraftAttempt>()("loopcord/loop/drafting/DraftReview") {}
