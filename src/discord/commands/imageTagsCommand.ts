import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect, Option } from "effect"
import { GuildImageTagsStore, MAX_IMAGE_TAGS_CHARS } from "../../store/GuildImageTagsStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

const shown = (tags: string) => (tags === "" ? "(none)" : `\`${tags.replace(/`/g, "'")}\``)

/**
 * `/image-tags show|set|clear`: this server's default image tags for generate_image, in place of
 * IMAGE_DEFAULT_POSITIVE_TAGS / IMAGE_DEFAULT_NEGATIVE_TAGS (Manage Server).
 */
export const imageTagsCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireGuild(interaction)
    yield* requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server")
    const store = yield* GuildImageTagsStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const subcommand = interaction.options.getSubcommand()
    if (subcommand === "set") {
      const positive = interaction.options.getString("positive") ?? ""
      const negative = interaction.options.getString("negative") ?? ""
      if (positive.length > MAX_IMAGE_TAGS_CHARS || negative.length > MAX_IMAGE_TAGS_CHARS) {
        return yield* new CommandError({ detail: `Tag lists are at most ${MAX_IMAGE_TAGS_CHARS} characters.` })
      }
      yield* store.set(guildId, { positive, negative }, interaction.user.id).pipe(Effect.mapError(failed))
      return `✅ Image tags of this server: positive ${shown(positive.trim())}, negative ${shown(negative.trim())}. ` +
        "Negative tags apply only where the image backend takes a negative prompt."
    }
    if (subcommand === "clear") {
      const had = yield* store.clear(guildId).pipe(Effect.mapError(failed))
      return had ? "✅ This server's image tags are cleared: the bot's defaults apply again." : "This server had no image tags of its own."
    }
    const tags = yield* store.get(guildId).pipe(Effect.mapError(failed))
    return Option.match(tags, {
      onNone: () => "This server uses the bot's default image tags. Set its own with `/image-tags set`.",
      onSome: (own) => `Image tags of this server: positive ${shown(own.positive)}, negative ${shown(own.negative)}.`
    })
  })
