import { createHash } from "node:crypto"
import { Clock, Effect, Option, Ref } from "effect"
import type { GenerationRequest } from "../GenerationRequest"

/**
 * What a NovelAI session leaves for the retry of the same reply (docs/architecture.md,
 * "NovelAI's pass rules" and "Fallback continuation"): when a fragment request fails mid-reply,
 * the text generated but not yet shown (the unfinished sentence) and the output tokens already
 * spent. The outer tier retries with the shown text as the prefill; the session that continues
 * exactly that reply takes the entry, shows the fragment first and continues after it within
 * what is left of the budget. Provider-owned state, so the tool loop carries none of it (the
 * loop names no provider). Bounded: at most `maxEntries`, each for `ttlMillis`.
 */
interface CarriedFragment {
  readonly fragment: string
  readonly tokensUsed: number
}

export interface FragmentCarry {
  readonly put: (key: string, carried: CarriedFragment) => Effect.Effect<void>
  readonly take: (key: string) => Effect.Effect<Option.Option<CarriedFragment>>
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex")

/** The conversation a reply answers (model left out: a fallback model may continue it). */
export const conversationKey = (request: GenerationRequest): string =>
  digest(JSON.stringify([
    request.system,
    request.messages.map((message) => [message.role, message.name ?? "", message.content]),
    request.functionHistory.map((entry) => [entry.functionCall.name, entry.functionCall.args ?? null, entry.functionResponse.response.result ?? null])
  ]))

/** One reply of one conversation, after exactly `shown` text. */
export const carryKey = (conversation: string, shown: string): string => `${conversation}:${digest(shown)}`

export const makeFragmentCarry = (options: { readonly maxEntries?: number; readonly ttlMillis?: number } = {}): Effect.Effect<FragmentCarry> =>
  Effect.map(Ref.make(new Map<string, CarriedFragment & { readonly at: number }>()), (entries) => {
    const maxEntries = options.maxEntries ?? 64
    const ttl = options.ttlMillis ?? 10 * 60_000
    return {
      put: (key, carried) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Ref.update(entries, (current) => {
            const next = new Map([...current].filter(([, entry]) => now - entry.at < ttl))
            next.delete(key)
            next.set(key, { ...carried, at: now })
            while (next.size > maxEntries) next.delete(next.keys().next().value as string)
            return next
          })),
      take: (key) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Ref.modify(entries, (current) => {
            const entry = current.get(key)
            if (entry === undefined) return [Option.none(), current]
            const next = new Map(current)
            next.delete(key)
            return [now - entry.at < ttl ? Option.some({ fragment: entry.fragment, tokensUsed: entry.tokensUsed }) : Option.none(), next]
          }))
    }
  })
