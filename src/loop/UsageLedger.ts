import { Context, Effect } from "effect"
import type { CredentialSource } from "../domain/CredentialSource"
import type { TokenUsage } from "../domain/TokenUsage"

/** One finished turn that reached the provider: who, where, on whose key, how many tokens. */
export interface TurnUsage {
  readonly guildId: string | undefined
  readonly userId: string
  readonly source: CredentialSource
  /** The turn's summed usage; `undefined` when the provider reported none. */
  readonly usage: TokenUsage | undefined
}

export interface UsageLedgerShape {
  /** Never fails: a ledger that cannot be written is logged, never the turn's problem. */
  readonly record: (entry: TurnUsage) => Effect.Effect<void>
}

/** Turns and tokens per user, server, day and credential source (`/usage`). The store implements it. */
export const UsageLedger = Context.Reference<UsageLedgerShape>("loopcord/loop/UsageLedger", {
  defaultValue: () => ({ record: () => Effect.void })
})
