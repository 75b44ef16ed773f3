import { Context, type Effect, type Option } from "effect"
import type { StoreError } from "./StoreError"

/**
 * `mute`: the persona ignores the user's messages as triggers (context unchanged).
 * `block`: also replaces the user's messages in context by a notice (seed 002 "Persona User Blocking").
 */
export type BlockMode = "mute" | "block"

/** Bounds of one block, in whole hours (1 hour to 30 days). */
export const MIN_BLOCK_HOURS = 1
export const MAX_BLOCK_HOURS = 720

/** An active (or, when read back later, possibly expired) persona-scoped block of one guild member. */
export interface PersonaUserBlock {
  readonly guildId: string
  /** `undefined` = the default persona. */
  readonly personaId: string | undefined
  readonly userId: string
  /** Name the persona knows the user by (used in the context notice). */
  readonly userName: string
  readonly mode: BlockMode
  readonly reason: string | undefined
  /** Who asked for it: the triggering user's id for the tool, an admin for commands. */
  readonly blockedBy: string | undefined
  readonly createdAt: number
  /** Epoch millis on the Effect Clock; the block is active while `now < expiresAt`. */
  readonly expiresAt: number
}

export interface BlockRequest {
  readonly guildId: string
  readonly personaId: string | undefined
  readonly userId: string
  readonly userName: string
  readonly mode: BlockMode
  /** Whole hours in [MIN_BLOCK_HOURS, MAX_BLOCK_HOURS]; anything else fails with `invalid_input`. */
  readonly hours: number
  readonly reason?: string | undefined
  readonly blockedBy?: string | undefined
}

export interface PersonaBlockStoreShape {
  /** Creates or replaces the user's block for this persona; expiry = Clock now + hours. */
  readonly block: (request: BlockRequest) => Effect.Effect<PersonaUserBlock, StoreError>
  /** Removes the user's block; the removed one when it was still active. */
  readonly unblock: (
    guildId: string,
    personaId: string | undefined,
    userId: string
  ) => Effect.Effect<Option.Option<PersonaUserBlock>, StoreError>
  /** Every unexpired block of this persona in the guild (expired rows are ignored and pruned). */
  readonly activeBlocks: (
    guildId: string,
    personaId: string | undefined
  ) => Effect.Effect<ReadonlyArray<PersonaUserBlock>, StoreError>
  /** The user's unexpired block for this persona, if any (the trigger check of the Discord front). */
  readonly activeBlock: (
    guildId: string,
    personaId: string | undefined,
    userId: string
  ) => Effect.Effect<Option.Option<PersonaUserBlock>, StoreError>
}

export class PersonaBlockStore extends Context.Tag("loopcord/store/PersonaBlockStore")<
  PersonaBlockStore,
  PersonaBlockStoreShape
>() {}
