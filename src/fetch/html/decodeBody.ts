/** Text of a fetched body: the declared charset (header, then `<meta>`), UTF-8 when unknown. */
import { TextDecoder } from "node:util"

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
