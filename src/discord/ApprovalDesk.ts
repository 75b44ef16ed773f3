import { Deferred, Effect, HashMap, Option, Random, Ref } from "effect"
import type { ApprovalAnswer } from "../tools/ToolApprovals"

/** Questions waiting at once, every server together; past it a call is denied unasked. */
const MAX_PENDING_APPROVALS = 500

/** Who pressed a button, as far as the rule cares. */
interface Presser {
  readonly userId: string
  /** Holds Manage Server where the question was asked (checked at the moment of the press). */
  readonly canManageServer: boolean
}

type PressOutcome =
  /** The answer counts: the waiting call hears it. */
  | "taken"
  /** Someone else pressed: only the member the reply is for, or a Manage Server member, may answer. */
  | "not_allowed"
  /** Nothing waits under this id (answered, timed out, stopped, or never asked). */
  | "unknown"

interface Pending {
  readonly userId: string
  readonly answered: Deferred.Deferred<{ readonly answer: ApprovalAnswer; readonly by: string }>
}

/**
 * The approval questions waiting for a button press, in memory and bounded: who may answer
 * each, and the first allowed answer. Pure bookkeeping, so its rules are tested on their own.
 */
export const makeApprovalDesk = (maxPending: number = MAX_PENDING_APPROVALS) =>
  Effect.gen(function*() {
    const pending = yield* Ref.make(HashMap.empty<string, Pending>())
    // Ids of one process never repeat; the random prefix keeps them apart from another process's.
    const prefix = (yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)
    const counter = yield* Ref.make(0)

    /** A new question for `userId`: its id and the wait for its answer; None when too many wait already. */
    const open = (userId: string) =>
      Effect.gen(function*() {
        const answered = yield* Deferred.make<{ readonly answer: ApprovalAnswer; readonly by: string }>()
        const id = `${prefix}.${yield* Ref.updateAndGet(counter, (n) => n + 1)}`
        const added = yield* Ref.modify(pending, (all): [boolean, HashMap.HashMap<string, Pending>] =>
          HashMap.size(all) >= maxPending ? [false, all] : [true, HashMap.set(all, id, { userId, answered })])
        return added ? Option.some({ id, answer: Deferred.await(answered) }) : Option.none()
      })

    const press = (id: string, presser: Presser, answer: ApprovalAnswer): Effect.Effect<PressOutcome> =>
      Effect.gen(function*() {
        const entry = HashMap.get(yield* Ref.get(pending), id)
        if (Option.isNone(entry)) return "unknown"
        if (presser.userId !== entry.value.userId && !presser.canManageServer) return "not_allowed"
        // The first allowed press wins; a second one (a double click) finds it answered.
        return (yield* Deferred.succeed(entry.value.answered, { answer, by: presser.userId })) ? "taken" : "unknown"
      })

    /** The question is over (whatever ended it): later presses find nothing. */
    const close = (id: string) => Ref.update(pending, HashMap.remove(id))

    const size = Effect.map(Ref.get(pending), HashMap.size)

    return { open, press, close, size } as const
  })

export type ApprovalDesk = Effect.Success<ReturnType<typeof makeApprovalDesk>>
