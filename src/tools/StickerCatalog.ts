import { Context, Effect, Layer, Option } from "effect"
import type { Sticker } from "../domain/Sticker"

/** The guild sticker cache `select_sticker_for_response` picks from (docs/architecture.md, Stickers). */
export class StickerCatalog extends Context.Service<StickerCatalog, {
  readonly lookup: (guildId: string | undefined, stickerId: string) => Effect.Effect<Option.Option<Sticker>>
  /**
   * Every sticker the guild has (what `select_sticker_for_response` offers the model). Optional:
   * a catalog without it hides that tool.
   */
  readonly list?: (guildId: string) => Effect.Effect<ReadonlyArray<Sticker>>
}>()("loopcord/tools/StickerCatalog") {
  /** No stickers known (terminal front, tests that do not care). */
  static readonly none = Layer.succeed(StickerCatalog, { lookup: () => Effect.succeed(Option.none()) })
}
