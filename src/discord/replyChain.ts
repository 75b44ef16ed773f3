import type { Message } from "discord.js"
import { Duration, Effect, Ref } from "effect"
import { hasContent, type HistoryEntry, historyEntry, type SelfIdentity } from "./history"

/** All the fetches of one reply chain together take at most this long (the turn waits for them). */
const DEFAULT_REPLY_CHAIN_BUDGET = Duration.seconds(3)

interface ReplyChainOptions {
  /** `DISCORD_REPLY_CHAIN_MAX`: messages brought in at most (0: none). */
  readonly max: number
  readonly budget?: Duration.Input
}

/**
 * The messages the trigger's reply chain reaches outside the recent history, oldest first: the
 * message it replies to, the one that one replies to, and so on, until a message the history
 * already holds, one in another channel, one that cannot be fetched, `max` messages, or the
 * time budget (what was fetched by then is kept). Each comes from the client's cache when it is
 * there, else one REST fetch; a loop in the chain ends it.
 */
export const replyChain = (
  trigger: Message,
  known: ReadonlySet<string>,
  self: SelfIdentity,
  options: ReplyChainOptions
): Effect.Effect<ReadonlyArray<HistoryEntry>> =>
  Effect.gen(function*() {
    if (options.max <= 0) return []
    const collected = yield* Ref.make<ReadonlyArray<Message>>([])
    const walk = Effect.gen(function*() {
      const seen = new Set<string>([trigger.id])
      let reference = trigger.reference
      while (reference?.messageId !== undefined && (yield* Ref.get(collected)).length < options.max) {
        const id = reference.messageId
        if (known.has(id) || seen.has(id) || (reference.channelId !== undefined && reference.channelId !== trigger.channelId)) return
        seen.add(id)
        const message = yield* Effect.tryPromise(() => trigger.channel.messages.fetch(id))
        yield* Ref.update(collected, (messages) => [...messages, message])
        reference = message.reference
      }
    })
    yield* walk.pipe(
      Effect.timeout(options.budget ?? DEFAULT_REPLY_CHAIN_BUDGET),
      Effect.catch((error) => Effect.logDebug(`reply chain cut short: ${error.message}`).pipe(Effect.annotateLogs({ messageId: trigger.id })))
    )
    const messages = yield* Ref.get(collected)
    return [...messages].reverse().map((message) => historyEntry(message, self)).filter(hasContent)
  })
