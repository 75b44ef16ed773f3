import { Context, Effect, Layer, Option } from "effect"
import type { Sticker } from "../domain/Sticker"

export class StickerCatalog extends Context.Service<StickerCatalog, {
  readonly lookup: (guildId: string | undefined, stickerId: string) => Effect.Effect<Option.Option<Sticker>>
}>()("loopcord/tools/StickerCatalog") {
  static readonly none = Layer.succeed(StickerCatalog, { lookup: () => Effect.succeed(Option.none()) })
}
