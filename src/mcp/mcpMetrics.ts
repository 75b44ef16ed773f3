import { type Effect, Metric } from "effect"

/** How many guild MCP servers the circuit breaker holds back now (exported with the ops metrics). */
export const mcpBreakersOpen = Metric.gauge("loopcord_mcp_breakers_open", {
  description: "Guild MCP servers held back by the circuit breaker after a failed connect"
})

/** Feeds a circuit breaker's open count to the gauge. */
export const publishOpenBreakers = (open: number): Effect.Effect<void> => Metric.update(mcpBreakersOpen, open)
