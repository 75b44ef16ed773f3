/**
 * An incremental parser for `text/event-stream` (the WHATWG HTML event-stream rules), fed with
 * decoded text in arbitrary pieces. Unlike @effect/experimental's `Sse` it keeps comments
 * (`: keep-alive`, `: OPENROUTER PROCESSING`), which prove a queued request is alive, and it
 * ignores `retry:` instead of pausing the stream.
 */

export type SseFrame =
  | { readonly _tag: "Event"; readonly event: string; readonly data: string; readonly id: string | undefined }
  | { readonly _tag: "Comment"; readonly text: string }

/**
 * A pending line or event above this size fails the stream instead of growing memory forever.
 * The largest real event carries a whole answer (a Responses `response.completed`), and every
 * part of an answer has a cap of its own (reply text, reasoning, tool arguments).
 */
export const defaultMaxEventChars = 8 * 1024 * 1024

/** The event bound for a tool-argument cap: room for a few whole payloads in one event, never below the default. */
export const sseEventLimit = (maxArgumentChars: number): number => Math.max(defaultMaxEventChars, 4 * maxArgumentChars)

export class SseParser {
  /** Pieces of the line not yet terminated (joined only once its end arrives). */
  private pendingLine: Array<string> = []
  private pendingLineChars = 0
  private skipLeadingLf = false
  private atStreamStart = true
  private data: Array<string> = []
  private dataChars = 0
  private eventName: string | undefined = undefined
  private lastEventId: string | undefined = undefined
  /** Set once the pending event outgrew `maxEventChars`; the parser accepts nothing after that. */
  tooLarge = false

  constructor(private readonly maxEventChars: number = defaultMaxEventChars) {}

  /** Feeds the next piece of text; complete frames are appended to `out`. */
  feed(text: string, out: Array<SseFrame>): void {
    if (this.tooLarge || text.length === 0) return
    let position = 0
    if (this.atStreamStart) {
      this.atStreamStart = false
      if (text.charCodeAt(0) === 0xfeff) position = 1
    }
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false
      if (text.charCodeAt(position) === 10) position += 1
    }
    let nextLf = text.indexOf("\n", position)
    let nextCr = text.indexOf("\r", position)
    while (position < text.length) {
      if (nextLf !== -1 && nextLf < position) nextLf = text.indexOf("\n", position)
      if (nextCr !== -1 && nextCr < position) nextCr = text.indexOf("\r", position)
      const end = nextCr === -1 ? nextLf : nextLf === -1 ? nextCr : Math.min(nextLf, nextCr)
      if (end === -1) {
        this.pendingLine.push(position === 0 ? text : text.slice(position))
        this.pendingLineChars += text.length - position
        break
      }
      let line = text.slice(position, end)
      if (this.pendingLine.length > 0) {
        this.pendingLine.push(line)
        line = this.pendingLine.join("")
        this.pendingLine = []
        this.pendingLineChars = 0
      }
      this.line(line, out)
      position = end + 1
      if (end === nextCr) {
        // CRLF is one line break, even when the LF arrives in the next piece.
        if (position === text.length) this.skipLeadingLf = true
        else if (text.charCodeAt(position) === 10) position += 1
      }
    }
    if (this.pendingLineChars + this.dataChars > this.maxEventChars) this.tooLarge = true
  }

  /**
   * The input ended. A last line without its line break is still a line, and an event whose
   * blank line never came is dispatched too (servers that close right after `data: [DONE]`).
   */
  end(out: Array<SseFrame>): void {
    if (this.tooLarge) return
    if (this.pendingLine.length > 0) {
      const line = this.pendingLine.join("")
      this.pendingLine = []
      this.pendingLineChars = 0
      this.line(line, out)
    }
    this.dispatch(out)
  }

  private line(line: string, out: Array<SseFrame>): void {
    if (line.length === 0) {
      this.dispatch(out)
      return
    }
    const colon = line.indexOf(":")
    if (colon === 0) {
      out.push({ _tag: "Comment", text: line.charCodeAt(1) === 32 ? line.slice(2) : line.slice(1) })
      return
    }
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? "" : line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1)
    switch (field) {
      case "data":
        this.data.push(value)
        this.dataChars += value.length + 1
        return
      case "event":
        this.eventName = value
        return
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value
        return
      default:
        // `retry` and unknown fields carry nothing a provider stream needs.
        return
    }
  }

  private dispatch(out: Array<SseFrame>): void {
    if (this.data.length > 0) {
      out.push({
        _tag: "Event",
        event: this.eventName === undefined || this.eventName.length === 0 ? "message" : this.eventName,
        data: this.data.length === 1 ? this.data[0]! : this.data.join("\n"),
        id: this.lastEventId
      })
    }
    this.data = []
    this.dataChars = 0
    this.eventName = undefined
  }
}
