import { Context, Effect, Layer } from "effect"
import type { Tool } from "./Tool"

/** Guild-scoped tools for one turn (guild MCP servers), after the exposure rules (docs/architecture.md, Tool availability and assembly). */
export interface GuildToolSet {
  /** Tools to declare and route for this guild; names never collide with built-in or global tools. */
  readonly tools: ReadonlyArray<Tool>
  /** Built-in tool names this guild replaces (`fetch_url` by a url_fetcher server, `web_search` by a web_search server). */
  readonly hiddenBuiltins: ReadonlyArray<string>
  /**
   * The guild tools standing in for each hidden built-in (`fetch_url` → the url_fetcher server's
   * functions): deliberate tool mode lets them answer the built-in's trigger phrases. Absent: none.
   */
  readonly replacements?: ReadonlyMap<string, ReadonlyArray<string>>
}

export const emptyGuildToolSet: GuildToolSet = { tools: [], hiddenBuiltins: [] }

/**
 * Guild-scoped tools. The MCP module provides the real one; without it no guild tools exist.
 * Implementations never fail: a broken server only drops its tools.
 */
export class GuildToolSource extends Context.Service<GuildToolSource, {
  readonly forGuild: (guildId: string) => Effect.Effect<GuildToolSet>
}>()("loopcord/tools/GuildToolSource") {
  static readonly none = Layer.succeed(GuildToolSource, { forGuild: () => Effect.succeed(emptyGuildToolSet) })
}
