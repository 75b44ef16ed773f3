import { Effect } from "effect"
import type { PassResult } from "../../domain/PassResult"
import { ModelWindows } from "../../provider/ModelWindows"

/** The attempt ended on a refusal of its length (after its retries on the same model). */
export const endedOnOverflow = (last: PassResult | undefined): boolean =>
  last?._tag === "Error" && last.error.reason === "ContextOverflow"

/**
 * After a model refused the conversation as too long, the next model worth trying: the first
 * later one in the chain whose window is larger (a model with the same or a smaller window would
 * refuse it too). Undefined: none is, and the turn ends with the refusal.
 */
export const nextLargerWindow = (models: ReadonlyArray<string>, from: number): Effect.Effect<number | undefined> =>
  Effect.gen(function*() {
    const windows = yield* ModelWindows
    const current = models[from]
    if (current === undefined) return undefined
    const refused = yield* windows.windowOf(current)
    // No window known at all: nothing says a later model would fare better or worse.
    if (refused === undefined) return from + 1 < models.length ? from + 1 : undefined
    for (let index = from + 1; index < models.length; index++) {
      const candidate = yield* windows.windowOf(models[index]!)
      if (candidate === undefined || candidate.tokens > refused.tokens) return index
    }
    return undefined
  })
