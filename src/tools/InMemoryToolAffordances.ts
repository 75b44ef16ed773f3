import { Effect, Layer, Ref } from "effect"
import { ToolAffordances, type ToolAffordancesShape } from "./ToolAffordances"

/** Retention windows: channel → tool → turn ends still to come before the tool is dropped. */
type Windows = ReadonlyMap<string, ReadonlyMap<string, number>>

/**
 * Deliberate tool mode's affordance windows, in memory (seed step 7, design decision 2).
 * `retain(channel, tool, n)` during a turn keeps the tool exposed for the next `n` turns of the
 * channel: the end of the retaining turn itself does not count. Retaining again never shortens
 * a window.
 */
export const make: Effect.Effect<ToolAffordancesShape> = Effect.gen(function*() {
  const windows = yield* Ref.make<Windows>(new Map())

  const retain = (channelId: string, toolName: string, turns: number) =>
    turns <= 0 ? Effect.void : Ref.update(windows, (all) => {
      const channel = new Map(all.get(channelId) ?? [])
      // +1: the current turn's end is the first one counted by turnEnded.
      channel.set(toolName, Math.max(channel.get(toolName) ?? 0, Math.floor(turns) + 1))
      return new Map(all).set(channelId, channel)
    })

  const retained = (channelId: string) =>
    Effect.map(Ref.get(windows), (all): ReadonlyArray<string> => [...(all.get(channelId)?.keys() ?? [])])

  const turnEnded = (channelId: string) =>
    Ref.update(windows, (all) => {
      const channel = all.get(channelId)
      if (channel === undefined) return all
      const next = new Map(all)
      const shrunk = new Map([...channel].map(([tool, left]) => [tool, left - 1] as const).filter(([, left]) => left > 0))
      if (shrunk.size === 0) next.delete(channelId)
      else next.set(channelId, shrunk)
      return next
    })

  return { retain, retained, turnEnded }
})

export const layer: Layer.Layer<ToolAffordances> = Layer.effect(ToolAffordances, make)
