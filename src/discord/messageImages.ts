import type { ImageRef } from "../domain/ChatMessage"

/** What an attachment tells about itself (discord.js `Attachment` has these fields). */
export interface AttachmentFacts {
  /** Discord's media proxy (`media.discordapp.net`). */
  readonly proxyURL: string
  readonly contentType: string | null
  readonly size: number
}

/** An embed's image or thumbnail (discord.js `EmbedAssetData`). */
interface EmbedAssetFacts {
  /** Discord's media proxy; absent for an embed Discord did not process. */
  readonly proxyURL?: string | undefined
}

/** What an embed tells about its pictures (discord.js `Embed` has these fields). */
export interface EmbedFacts {
  readonly image: EmbedAssetFacts | null
  readonly thumbnail: EmbedAssetFacts | null
}

/**
 * At most this many images of one message go to the model. Discord allows 10 attachments and
 * 10 embeds; vision models are asked about a handful at a time.
 */
export const MAX_IMAGES_PER_MESSAGE = 10

const nonEmpty = (url: string | undefined): url is string => url !== undefined && url.length > 0

/**
 * The images of a message, by Discord's proxy URL only (never the original: an embed's original
 * URL is whatever host a poster chose, and fetching it would reach that host from the bot; the
 * proxy is Discord's, and it is what Discord already fetched and checked). Image attachments
 * come first (with content type and size), then one picture per embed: its image, else its
 * thumbnail (an image link's embed carries the picture there). An embed picture without a proxy
 * URL is left out, and the same URL is listed once.
 */
export const messageImages = (message: {
  readonly attachments: Iterable<AttachmentFacts>
  readonly embeds: ReadonlyArray<EmbedFacts>
}): ReadonlyArray<ImageRef> => {
  const attached = [...message.attachments]
    .filter((attachment) => attachment.contentType?.startsWith("image/") === true && nonEmpty(attachment.proxyURL))
    .map((attachment): ImageRef => ({
      url: attachment.proxyURL,
      ...(attachment.contentType === null ? {} : { mimeType: attachment.contentType }),
      ...(Number.isSafeInteger(attachment.size) && attachment.size >= 0 ? { sizeBytes: attachment.size } : {})
    }))
  const embedded = message.embeds.flatMap((embed): ReadonlyArray<ImageRef> => {
    const url = [embed.image?.proxyURL, embed.thumbnail?.proxyURL].find(nonEmpty)
    return url === undefined ? [] : [{ url }]
  })
  const byUrl = new Map<string, ImageRef>()
  for (const image of [...attached, ...embedded]) {
    if (byUrl.size === MAX_IMAGES_PER_MESSAGE) break
    if (!byUrl.has(image.url)) byUrl.set(image.url, image)
  }
  return [...byUrl.values()]
}
