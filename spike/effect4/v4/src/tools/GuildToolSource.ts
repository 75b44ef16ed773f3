import { Context, Effect, Layer } from "effect"
import type { Tool } from "./Tool"

/** Guild-scoped tools for one turn (guild MCP servers). */
export interface GuildToolSet {
  readonly tools: ReadonlyArray<Tool>
  readonly hiddenBuiltins: ReadonlyArray<string>
}

export const emptyGuildToolSet: GuildToolSet = { tools: [], hiddenBuiltins: [] }

export class GuildToolSource extends Context.Service<GuildToolSource, {
  readonly forGuild: (guildId: string) => Effect.Effect<GuildToolSet>
}>()("loopcord/tools/GuildToolSource") {
  static readonly none = Layer.succeed(GuildToolSource, { forGuild: () => Effect.succeed(emptyGuildToolSet) })
}
