import { Effect, Layer } from "effect"

/**
 * A Layer whose module is imported only when the layer is built, so start-up loads only what
 * the configuration uses (discord.js for the Discord front, pg for a PostgreSQL URL, the MCP SDK
 * when MCP servers are configured). The import runs once: Node caches the module.
 */
export const lazyLayer = <M, A, E, R>(
  load: () => Promise<M>,
  pick: (module: M) => Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> => Layer.unwrap(Effect.map(Effect.promise(load), pick))
