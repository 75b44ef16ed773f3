import { Effect } from "effect"

/** A successful result whose `data.type` starts with this enriches the context and restarts the pass. */
export const CONTEXT_RESTART_PREFIX = "context_restart_"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The restart type of a tool result's data, when it asks for one. */
export const contextRestartType = (data: unknown): string | undefined =>
  isRecord(data) && typeof data["type"] === "string" && data["type"].startsWith(CONTEXT_RESTART_PREFIX)
    ? data["type"]
    : undefined

// Not ported: the restart itself (context items, the stash, flags). No bench tool asks for one.
export const handleEnhancedContextRestart = (_data: unknown): Effect.Effect<boolean> =>
  Effect.die(new Error("the context restart is not ported in the Effect 4 spike"))
