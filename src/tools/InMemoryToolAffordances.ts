import { Clock, Duration, Effect, Layer, Ref } from "effect"
import { ToolAffordances, type ToolAffordancesShape } from "./ToolAffordances"

/** A channel's windows are dropped this long after they were last extended, turns left or not. */
export const AFFORDANCE_WINDOW_TTL = Duration.hours(1)
/** Channels with open windows, at most: beyond, the one extended longest ago is dropped. */
export const MAX_AFFORDANCE_CHANNELS = 10_000
/** Tools retained per channel, at most: beyond, the one with the fewest turns left is dropped. */
export const MAX_RETAINED_TOOLS = 64

interface ChannelWindows {
  /** Tool → turn ends still to come before the tool is dropped. */
  readonly tools: ReadonlyMap<string, number>
  /** Clock millis after which the windows are gone. */
  readonly expiresAt: number
}

/** Channel → its windows; Map order is the order of the last extension (oldest first). */
type Windows = ReadonlyMap<string, ChannelWindows>

interface AffordanceBounds {
  readonly ttl?: Duration.Input
  readonly maxChannels?: number
  readonly maxToolsPerChannel?: number
}

const fewestLeft = (tools: ReadonlyMap<string, number>): string | undefined =>
  [...tools].reduce<readonly [string, number] | undefined>((least, entry) => (least === undefined || entry[1] < least[1] ? entry : least), undefined)?.[0]

/**
 * Deliberate tool mode's affordance windows, in memory (docs/architecture.md, Deliberate tool mode).
 * `retain(channel, tool, n)` during a turn keeps the tool exposed for the next `n` turns of the
 * channel: the end of the retaining turn itself does not count. Retaining again never shortens
 * a window. Bounded (nothing a stranger sends may grow without limit): windows expire on the Clock an hour after they were last
 * extended, and the number of channels and of tools per channel is capped.
 */
export const makeWith = (bounds: AffordanceBounds = {}): Effect.Effect<ToolAffordancesShape> => Effect.gen(function*() {
  const windows = yield* Ref.make<Windows>(new Map())
  const ttl = Duration.toMillis(Duration.fromInputUnsafe(bounds.ttl ?? AFFORDANCE_WINDOW_TTL))
  const maxChannels = Math.max(1, bounds.maxChannels ?? MAX_AFFORDANCE_CHANNELS)
  const maxTools = Math.max(1, bounds.maxToolsPerChannel ?? MAX_RETAINED_TOOLS)

  const retain = (channelId: string, toolName: string, turns: number) =>
    turns <= 0 ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.update(windows, (all) => {
        const next = new Map(all)
        // Ordered by last extension with one TTL, so the expired channels come first.
        for (const [id, channel] of next) {
          if (channel.expiresAt > now) break
          next.delete(id)
        }
        const tools = new Map(next.get(channelId)?.tools ?? [])
        // +1: the current turn's end is the first one counted by turnEnded.
        tools.set(toolName, Math.max(tools.get(toolName) ?? 0, Math.floor(turns) + 1))
        while (tools.size > maxTools) {
          const dropped = fewestLeft(new Map([...tools].filter(([name]) => name !== toolName)))
          if (dropped === undefined) break
          tools.delete(dropped)
        }
        // Re-inserted last: the Map stays ordered by last extension.
        next.delete(channelId)
        next.set(channelId, { tools, expiresAt: now + ttl })
        for (const oldest of next.keys()) {
          if (next.size <= maxChannels) break
          next.delete(oldest)
        }
        return next
      }))

  const retained = (channelId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(Ref.get(windows), (all): ReadonlyArray<string> => {
        const channel = all.get(channelId)
        return channel === undefined || channel.expiresAt <= now ? [] : [...channel.tools.keys()]
      }))

  const turnEnded = (channelId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.update(windows, (all) => {
        const channel = all.get(channelId)
        if (channel === undefined) return all
        const next = new Map(all)
        const shrunk = new Map([...channel.tools].map(([tool, left]) => [tool, left - 1] as const).filter(([, left]) => left > 0))
        if (shrunk.size === 0 || channel.expiresAt <= now) next.delete(channelId)
        else next.set(channelId, { ...channel, tools: shrunk })
        return next
      }))

  return { retain, retained, turnEnded }
})

export const make: Effect.Effect<ToolAffordancesShape> = makeWith()

export const layer: Layer.Layer<ToolAffordances> = Layer.effect(ToolAffordances, make)
