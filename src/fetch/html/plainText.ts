import { decodeEntities } from "./entities"
import { findEndTag, RAW_TEXT, tagNameAt } from "./scanHtml"

/** Content never shown as text. */
const SKIPPED = new Set([...RAW_TEXT, "noscript", "template", "svg", "math", "head", "select", "object", "canvas"])

const BLOCK = new Set([
  "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "h1", "h2", "h3", "h4", "h5", "h6",
  "ul", "ol", "dl", "dt", "dd", "table", "tr", "blockquote", "pre", "figure", "figcaption", "form", "fieldset",
  "address", "details", "summary", "hr", "br", "body", "html"
])

/**
 * The fallback when a page is too deep, too large or breaks the DOM path: a single linear pass
 * that drops tags, comments and script/style content, keeps block boundaries as line breaks and
 * decodes common entities. Never recursive, never quadratic, whatever the input.
 */
export const htmlToPlainText = (html: string, maxChars: number): string => {
  const parts: Array<string> = []
  let length = 0
  let index = 0
  const push = (text: string) => {
    if (length < maxChars) {
      parts.push(text)
      length += text.length
    }
  }
  while (index < html.length && length < maxChars) {
    const open = html.indexOf("<", index)
    if (open === -1) {
      push(decodeEntities(html.slice(index)))
      break
    }
    if (open > index) push(decodeEntities(html.slice(index, open)))
    if (html.startsWith("<!--", open)) {
      const close = html.indexOf("-->", open + 4)
      index = close === -1 ? html.length : close + 3
      continue
    }
    const closing = html.charCodeAt(open + 1) === 47
    const name = tagNameAt(html, open + (closing ? 2 : 1))
    if (name === "" || !/^[a-z]/.test(name)) {
      // A lone "<" is text.
      push("<")
      index = open + 1
      continue
    }
    const end = html.indexOf(">", open + 1)
    if (end === -1) break
    index = end + 1
    if (!closing && SKIPPED.has(name)) {
      const close = findEndTag(html, name, index)
      index = close === -1 ? html.length : close
      continue
    }
    if (name === "li" && !closing) push("\n- ")
    else if (name === "td" || name === "th") push(" ")
    else if (BLOCK.has(name)) push("\n")
  }
  return parts
    .join("")
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/^(- ?\n)+/gm, "")
    .trim()
    .slice(0, maxChars)
}
