import { Effect } from "effect"
import { TextDecoder } from "node:util"
import type { ConversionMode } from "../../../fetch/html/convertHtml"
import type { HtmlConverter } from "../../../fetch/html/HtmlConverter"

export interface PageText {
  readonly text: string
  readonly mode: ConversionMode | "raw" | "text"
}

const TEXTUAL = /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|javascript|x-javascript|rss\+xml|atom\+xml)|[^;]*\+(json|xml))/i

/** Whether a content type is worth reading as text (missing ⇒ assume text). */
export const isTextual = (contentType: string | undefined): boolean =>
  contentType === undefined || contentType.trim() === "" || TEXTUAL.test(contentType.trim())

export const isHtml = (contentType: string | undefined): boolean =>
  contentType !== undefined && /text\/html|application\/xhtml\+xml/i.test(contentType)

const charsetOf = (contentType: string | undefined, head: string): string | undefined => {
  const declared = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType ?? "")?.[1]
  if (declared !== undefined) return declared
  // <meta charset="…"> or <meta http-equiv="Content-Type" content="…; charset=…"> near the top.
  return /<meta[^>]{0,200}?charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1]
}

// windows-1252 bytes 0x80–0x9F. Node 20's decoder returns them as C1 controls (latin1), so the
// labels WHATWG maps to windows-1252 (latin1, iso-8859-1, ascii, …) are repaired after decoding.
const WINDOWS_1252 = "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ"

const decoderFor = (label: string): TextDecoder | undefined => {
  try {
    return new TextDecoder(label)
  } catch {
    // An unknown label.
    return undefined
  }
}

/** Decodes with the declared charset (header, then `<meta>`), UTF-8 when unknown. */
export const decodeBody = (body: Uint8Array, contentType: string | undefined): string => {
  const head = isHtml(contentType) ? new TextDecoder("latin1").decode(body.subarray(0, 1024)) : ""
  const label = charsetOf(contentType, head)
  const decoder = (label === undefined ? undefined : decoderFor(label)) ?? new TextDecoder("utf-8")
  const text = decoder.decode(body)
  return decoder.encoding === "windows-1252"
    ? text.replace(/[\u0080-\u009f]/g, (char: string) => WINDOWS_1252[char.charCodeAt(0) - 0x80] ?? char)
    : text
}

/** Spec §7.4 conversion: HTML → Markdown unless `raw` (large pages off the event loop); other text as is. */
export const pageText = (
  converter: HtmlConverter,
  body: Uint8Array,
  contentType: string | undefined,
  options: { readonly raw: boolean; readonly url: URL }
) =>
  Effect.suspend(() => {
    const text = decodeBody(body, contentType)
    if (options.raw) return Effect.succeed<PageText>({ text, mode: "raw" })
    if (!isHtml(contentType)) return Effect.succeed<PageText>({ text, mode: "text" })
    return Effect.map(converter.convert(text, { baseUrl: options.url }), (converted): PageText => ({ text: converted.text, mode: converted.mode }))
  })
