import { Effect, Metric, Ref } from "effect"
import { createHash } from "node:crypto"

/**
 * loopcord's metrics (Effect `Metric`, exported over OTLP and as Prometheus text on /metrics).
 * Label values are bounded: statuses and reasons are closed sets, tool names are capped.
 */

export const turnsTotal = Metric.counter("loopcord_turns", { description: "Turns that ended, by status", incremental: true })

export const turnDuration = Metric.histogram("loopcord_turn_duration_ms", {
  boundaries: Metric.exponentialBoundaries({ start: 50, factor: 2, count: 14 }),
  description: "Wall time of a turn, from its start to its result (ms)"
})

export const providerErrorsTotal = Metric.counter("loopcord_provider_errors", {
  description: "Provider stream errors, by reason (RateLimit, Auth, Server, Network, …)",
  incremental: true
})

export const contextElisionsTotal = Metric.counter("loopcord_context_elisions", {
  description: "Items the context budget left out or cut to fit a model's window, by kind (tool_result, tool_exchange, history_message, history_image, cut_tool_result, cut_user_message)",
  incremental: true
})

export const contextOverflowsTotal = Metric.counter("loopcord_context_overflows", {
  description: "Requests a provider refused as too long for the model's context window (not provider errors: the key is never rested)",
  incremental: true
})

export const keyRotationsTotal = Metric.counter("loopcord_key_rotations", {
  description: "Attempts that moved on to another API key of the pool for the same model",
  incremental: true
})

export const fallbacksTotal = Metric.counter("loopcord_model_fallbacks", {
  description: "Attempts that moved on to the next model of the fallback chain",
  incremental: true
})

export const toolDuration = Metric.histogram("loopcord_tool_duration_ms", {
  boundaries: Metric.exponentialBoundaries({ start: 5, factor: 2, count: 17 }),
  description: "Duration of a tool call (ms), by tool and outcome"
})

export const queuedTurns = Metric.gauge("loopcord_channel_queue_depth", { description: "Turns waiting in channel queues" })

export const runningTurns = Metric.gauge("loopcord_turns_running", { description: "Turns running now" })

/** Defined beside the breaker it measures: the MCP pool sets it, and the ops metrics list it. */
export { mcpBreakersOpen } from "../mcp/mcpMetrics"

/** Distinct tool labels at most; later new names are counted as `other`. */
export const MAX_TOOL_LABELS = 64

/** Tool names come from the model: the first `MAX_TOOL_LABELS` distinct ones are labels, the rest `other`. */
export const makeToolLabels = Effect.map(Ref.make<ReadonlySet<string>>(new Set()), (seen) => (name: string) =>
  Ref.modify(seen, (known): [string, ReadonlySet<string>] => {
    const label = name.slice(0, 64)
    if (known.has(label)) return [label, known]
    if (known.size >= MAX_TOOL_LABELS) return ["other", known]
    return [label, new Set(known).add(label)]
  }))

/** A guild id as telemetry carries it: pseudonymous (never the raw id), stable across restarts. */
export const hashedGuild = (guildId: string | undefined): string =>
  guildId === undefined ? "dm" : createHash("sha256").update(`loopcord-guild:${guildId}`).digest("hex").slice(0, 16)

export const discordRateLimitedTotal = Metric.counter("loopcord_discord_rate_limited", {
  description: "Discord REST answers 429, by scope (global: the bot's limit across every route; route: one bucket)",
  incremental: true
})
