/**
 * One linear pass over raw HTML that estimates what a DOM parser would face: element count and
 * nesting depth. DOM parsers and converters are super-linear in depth (linkedom and htmlparser2
 * search the open-element stack on every close; turndown and Readability recurse), so a page
 * that is too deep or too large is never handed to them (see htmlToMarkdown).
 */

/** Elements that never have content. */
const VOID = new Set([
  "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
  "basefont", "bgsound", "frame", "keygen"
])

/** Elements whose end tag is optional: sloppy pages omit it and parsers close them implicitly. */
const IMPLIED_END = new Set([
  "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option", "optgroup", "colgroup", "rb", "rt", "rtc", "rp", "caption"
])

/** Content is text up to the matching end tag. */
export const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext"])

interface HtmlShape {
  readonly elements: number
  /** Character references in text: DOM parsers make a text node around each. */
  readonly references: number
  /** Upper estimate of the nesting depth of elements with a required end tag. */
  readonly maxDepth: number
}

const isNameChar = (code: number): boolean =>
  (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 58

/** Reads a tag name at `start` (lower-cased), or "" when there is none. */
export const tagNameAt = (html: string, start: number): string => {
  let end = start
  while (end < html.length && end - start < 32 && isNameChar(html.charCodeAt(end))) end++
  return html.slice(start, end).toLowerCase()
}

/** Index of the end tag `</name` at or after `from` (any case), or -1. Linear: `from` only moves forward. */
export const findEndTag = (html: string, name: string, from: number): number => {
  let index = from
  for (;;) {
    const candidate = html.indexOf("</", index)
    if (candidate === -1) return -1
    if (tagNameAt(html, candidate + 2) === name) return candidate
    index = candidate + 2
  }
}

export const scanHtml = (html: string): HtmlShape => {
  let foreign = 0
  let elements = 0
  let references = 0
  // The next "&" is cached: searching afresh from every tag would rescan the rest of the page.
  let nextAmp = html.indexOf("&")
  const countReferences = (from: number, to: number): void => {
    if (nextAmp !== -1 && nextAmp < from) nextAmp = html.indexOf("&", from)
    while (nextAmp !== -1 && nextAmp < to) {
      references++
      nextAmp = html.indexOf("&", nextAmp + 1)
    }
  }
  let depth = 0
  let maxDepth = 0
  let index = 0
  while (index < html.length) {
    const open = html.indexOf("<", index)
    countReferences(index, open === -1 ? html.length : open)
    if (open === -1) break
    if (html.startsWith("<!--", open)) {
      const close = html.indexOf("-->", open + 4)
      index = close === -1 ? html.length : close + 3
      continue
    }
    const closing = html.charCodeAt(open + 1) === 47 // "/"
    const name = tagNameAt(html, open + (closing ? 2 : 1))
    if (name === "" || !/^[a-z]/.test(name)) {
      // A stray "<" is text to a parser: count it like a node.
      references++
      index = open + 1
      continue
    }
    const end = html.indexOf(">", open + 1)
    if (end === -1) break
    index = end + 1
    if (closing) {
      if ((name === "svg" || name === "math") && foreign > 0) foreign--
      if (!VOID.has(name) && !IMPLIED_END.has(name) && depth > 0) depth--
      continue
    }
    elements++
    if (RAW_TEXT.has(name)) {
      const close = findEndTag(html, name, index)
      index = close === -1 ? html.length : close
      continue
    }
    // `<div/>` opens a div in HTML; only SVG/MathML elements really self-close.
    const entersForeign = name === "svg" || name === "math"
    const selfClosing = html.charCodeAt(end - 1) === 47 && (foreign > 0 || entersForeign)
    if (entersForeign && !selfClosing) foreign++
    if (!VOID.has(name) && !IMPLIED_END.has(name) && !selfClosing) {
      depth++
      if (depth > maxDepth) maxDepth = depth
    }
  }
  return { elements, references, maxDepth }
}
