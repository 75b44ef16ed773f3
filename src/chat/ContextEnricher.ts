import { Context, type Effect } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"

/** Who the turn is for, as far as context enrichment needs to know. */
interface EnrichmentTarget {
  readonly channelId: string
  /** The channel a thread belongs to (`TurnInput.parentChannelId`). */
  readonly parentChannelId: string | undefined
  readonly guildId: string | undefined
  readonly userId: string
  readonly personaId: string | undefined
}

/**
 * Adds what the bot remembers to a turn's conversation before the model sees it (the short-term
 * memory block, for instance), whatever the front. Optional: without it the context is used as
 * the front loaded it. Never fails: a broken source leaves the context as it was.
 */
export class ContextEnricher extends Context.Service<ContextEnricher, {
  readonly enrich: (target: EnrichmentTarget, messages: ReadonlyArray<ChatMessage>) => Effect.Effect<ReadonlyArray<ChatMessage>>
}>()("loopcord/chat/ContextEnricher") {}
