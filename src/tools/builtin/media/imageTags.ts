import { Effect, Option } from "effect"
import type { ImageSettings } from "../../../config/ImageConfig"
import type { GuildImageTagsStoreShape } from "../../../store/GuildImageTagsStore"

interface ImageTags {
  readonly positive: string
  readonly negative: string
  /** Where they come from: the server's `/image-tags`, or the environment. */
  readonly source: "server" | "environment"
}

/**
 * The default tags of a turn: the server's own when it set them (`/image-tags`), else
 * `IMAGE_DEFAULT_POSITIVE_TAGS` / `IMAGE_DEFAULT_NEGATIVE_TAGS`. A store that fails falls back
 * to the environment's (logged): tags are a nicety, never a reason to lose the image.
 */
export const tagsFor = (
  settings: Pick<ImageSettings, "defaultPositiveTags" | "defaultNegativeTags">,
  store: Option.Option<GuildImageTagsStoreShape>,
  guildId: string | undefined
): Effect.Effect<ImageTags> => {
  const environment: ImageTags = { positive: settings.defaultPositiveTags, negative: settings.defaultNegativeTags, source: "environment" }
  if (guildId === undefined || Option.isNone(store)) return Effect.succeed(environment)
  return store.value.get(guildId).pipe(
    Effect.map(Option.match({ onNone: () => environment, onSome: (tags): ImageTags => ({ ...tags, source: "server" }) })),
    Effect.catch((error) => Effect.as(Effect.logWarning(`image tags of guild ${guildId} unavailable; using the defaults: ${error.message}`), environment))
  )
}

/** `prompt` with the positive tags appended, unless it already carries them. */
export const withPositiveTags = (prompt: string, positive: string): string => {
  if (positive === "") return prompt
  const missing = positive.split(",").map((tag) => tag.trim()).filter((tag) => tag !== "" && !prompt.toLowerCase().includes(tag.toLowerCase()))
  return missing.length === 0 ? prompt : `${prompt.replace(/[\s,.]+$/, "")}, ${missing.join(", ")}`
}

/**
 * The progress line of a generation: the backend and mode, the default tags
 * (negative tags only when a negative prompt reaches the backend), and how to set them.
 */
export const progressNotice = (options: {
  readonly backend: string
  /** The mode's label ("image-to-image"); undefined for a new image. */
  readonly mode: string | undefined
  readonly mediaId: string | undefined
  readonly tags: ImageTags
  readonly negativeActive: boolean
  readonly inGuild: boolean
}): string => {
  const what = options.mode === undefined ? "Generating an image" : `Generating an image (${options.mode} from ${options.mediaId ?? "the reference"})`
  const negative = options.negativeActive && options.tags.negative !== "" ? `; negative tags: "${options.tags.negative}"` : ""
  const tags = options.tags.positive === "" ? "No default image tags" : `Default image tags: "${options.tags.positive}"`
  const hint = options.inGuild
    ? "Server admins set them with /image-tags."
    : "Set them with IMAGE_DEFAULT_POSITIVE_TAGS / IMAGE_DEFAULT_NEGATIVE_TAGS."
  return `${what} with ${options.backend}… ${tags}${negative}. ${hint}`
}
