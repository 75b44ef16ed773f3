import { Effect, Layer, Option } from "effect"
import { Sticker } from "../domain/Sticker"
import { StickerCatalog } from "../tools/StickerCatalog"
import { DiscordClient } from "./DiscordClient"

/** Stickers of the guild, from the client's cache (GUILD_CREATE and sticker updates keep it current). */
export const GuildStickerCatalog = Layer.effect(
  StickerCatalog,
  Effect.map(DiscordClient, (client) => ({
    lookup: (guildId: string | undefined, stickerId: string) =>
      Effect.sync(() => {
        const sticker = guildId === undefined ? undefined : client.guilds.cache.get(guildId)?.stickers.cache.get(stickerId)
        return sticker === undefined ? Option.none() : Option.some(Sticker({ id: sticker.id, name: sticker.name }))
      }),
    list: (guildId: string) =>
      Effect.sync(() =>
        [...(client.guilds.cache.get(guildId)?.stickers.cache.values() ?? [])]
          .filter((sticker) => sticker.available !== false)
          .map((sticker) => Sticker({ id: sticker.id, name: sticker.name })))
  }))
)
