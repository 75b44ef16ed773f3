import { Effect } from "effect"
import type { ConversionMode } from "../../../fetch/html/convertHtml"
import { decodeBody, isHtml } from "../../../fetch/html/decodeBody"
import type { HtmlConverter } from "../../../fetch/html/HtmlConverter"

export { decodeBody } from "../../../fetch/html/decodeBody"

interface PageText {
  readonly text: string
  readonly mode: ConversionMode | "raw" | "text"
}

const TEXTUAL = /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|javascript|x-javascript|rss\+xml|atom\+xml)|[^;]*\+(json|xml))/i

/** Whether a content type is worth reading as text (missing ⇒ assume text). */
export const isTextual = (contentType: string | undefined): boolean =>
  contentType === undefined || contentType.trim() === "" || TEXTUAL.test(contentType.trim())

/**
 * Conversion: HTML → Markdown unless `raw`; other text as is. An HTML body is handed
 * to the converter undecoded (a large page is decoded and converted off the event loop; its
 * bytes are transferred, so `body` must not be used afterwards).
 */
export const pageText = (
  converter: HtmlConverter["Service"],
  body: Uint8Array,
  contentType: string | undefined,
  options: { readonly raw: boolean; readonly url: URL }
) =>
  Effect.suspend(() => {
    if (options.raw) return Effect.succeed<PageText>({ text: decodeBody(body, contentType), mode: "raw" })
    if (!isHtml(contentType)) return Effect.succeed<PageText>({ text: decodeBody(body, contentType), mode: "text" })
    return Effect.map(
      converter.convert({ body, contentType }, { baseUrl: options.url }),
      (converted): PageText => ({ text: converted.text, mode: converted.mode })
    )
  })
