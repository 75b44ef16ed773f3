/**
 * Drains `<details>` blocks out of streamed text (the result's `detailsContent`): NovelAI personas
 * write scene metadata (place, time, mood...) in such a block; it goes to the result and memory,
 * never to the reply. Text may arrive cut anywhere, inside a tag included: a possible start of
 * `<details` or `</details>` is held until the next piece decides. The body (its `<summary>`
 * removed) is bounded by `maxBodyChars`; beyond it the rest of the block is dropped.
 */

const OPEN = "<details"
const CLOSE = "</details>"

/** Length of the longest suffix of `text` that is a (case-insensitive) prefix of `tag`. */
const partialTagAtEnd = (text: string, tag: string): number => {
  const lower = text.toLowerCase()
  for (let length = Math.min(tag.length - 1, lower.length); length > 0; length--) {
    if (tag.startsWith(lower.slice(lower.length - length))) return length
  }
  return 0
}

const cleanBody = (body: string): string => body.replace(/<summary\b[^>]*>[\s\S]*?<\/summary>/gi, "").trim()

interface DetailsStep {
  readonly visible: string
  readonly details: ReadonlyArray<string>
}

export class SceneDetailsFilter {
  private held = ""
  private inside = false
  private body = ""

  constructor(private readonly maxBodyChars = 8000) {}

  feed(text: string): DetailsStep {
    let rest = this.held + text
    this.held = ""
    let visible = ""
    const details: Array<string> = []
    while (rest.length > 0) {
      const lower = rest.toLowerCase()
      if (!this.inside) {
        const start = lower.indexOf(OPEN)
        if (start < 0) {
          const partial = partialTagAtEnd(rest, OPEN)
          visible += rest.slice(0, rest.length - partial)
          this.held = rest.slice(rest.length - partial)
          break
        }
        visible += rest.slice(0, start)
        const tagEnd = rest.indexOf(">", start)
        if (tagEnd < 0) {
          // `<details class=...` not finished yet (a tag is short: beyond 200 characters it is text).
          if (rest.length - start > 200) {
            visible += rest.slice(start)
            break
          }
          this.held = rest.slice(start)
          break
        }
        this.inside = true
        this.body = ""
        rest = rest.slice(tagEnd + 1)
        continue
      }
      const end = lower.indexOf(CLOSE)
      if (end < 0) {
        const partial = partialTagAtEnd(rest, CLOSE)
        this.append(rest.slice(0, rest.length - partial))
        this.held = rest.slice(rest.length - partial)
        break
      }
      this.append(rest.slice(0, end))
      const cleaned = cleanBody(this.body)
      if (cleaned.length > 0) details.push(cleaned)
      this.inside = false
      this.body = ""
      rest = rest.slice(end + CLOSE.length)
    }
    return { visible, details }
  }

  /** The stream ended: an unclosed block is still metadata; a held partial opener was text. */
  end(): DetailsStep {
    const held = this.held
    this.held = ""
    if (!this.inside) return { visible: held, details: [] }
    this.append(held)
    this.inside = false
    const cleaned = cleanBody(this.body)
    return { visible: "", details: cleaned.length > 0 ? [cleaned] : [] }
  }

  private append(text: string) {
    const room = this.maxBodyChars - this.body.length
    if (room > 0) this.body += text.slice(0, room)
  }
}
