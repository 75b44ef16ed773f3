/**
 * Splits reply text into Discord messages (pure). Every message is at most `limit` UTF-16 code
 * units (≥ Discord's character count, so always accepted); a code fence open at a split is closed
 * at the end of one message and reopened with its language at the start of the next; a surrogate
 * pair is never cut. Breaks prefer a paragraph, then a line, then whitespace, then a hard cut.
 *
 * Greedy and prefix-stable: a message is decided by the text from its start up to `limit`
 * characters further, so a streaming sink can seal messages as text grows (see `nextChunk`).
 */

export const DISCORD_MESSAGE_LIMIT = 2000

/** A fenced code block open at some position: what reopens and closes it. */
export interface OpenFence {
  /** Up to three spaces before the marker on the opening line. */
  readonly indent: string
  /** The run of backticks or tildes that opened the block (```, ~~~~ …). */
  readonly marker: string
  /** The info string (language) of the opening line, trimmed. */
  readonly info: string
}

interface Chunk {
  /** The message text: reopened fence line, body, closing fence line when needed. */
  readonly content: string
  /** Index in the source text where this message's body ends (next message starts here). */
  readonly end: number
  /** The fence still open at `end`, which the next message reopens. */
  readonly fenceAfter: OpenFence | undefined
}

// Runs longer than 64 are treated as text, so a reopened fence line always stays short.
const FENCE_LINE = /^( {0,3})(`{3,64}(?!`)|~{3,64}(?!~))(.*)$/
/** Info strings longer than this are cut to their first word when reopening (keeps room for text). */
const MAX_REOPEN_INFO = 64

/** The fence state after `line` (a full line without its newline), given the state before it. */
const fenceAfterLine = (line: string, open: OpenFence | undefined): OpenFence | undefined => {
  const match = FENCE_LINE.exec(line)
  if (match === null) return open
  const indent = match[1] ?? ""
  const marker = match[2] ?? ""
  const rest = match[3] ?? ""
  if (open === undefined) {
    // CommonMark: a backtick fence's info string may not contain backticks.
    if (marker[0] === "`" && rest.includes("`")) return open
    return { indent, marker, info: rest.trim() }
  }
  const closes = marker[0] === open.marker[0] && marker.length >= open.marker.length && rest.trim() === ""
  return closes ? undefined : open
}

/** The fence state at `end`, scanning whole lines of `text` from `start` (which begins a line). */
export const fenceStateAt = (text: string, start: number, end: number, open: OpenFence | undefined): OpenFence | undefined => {
  let state = open
  let lineStart = start
  while (lineStart < end) {
    const newline = text.indexOf("\n", lineStart)
    // A line cut by `end` is judged by what is visible so far.
    const lineEnd = newline === -1 || newline >= end ? end : newline
    state = fenceAfterLine(text.slice(lineStart, lineEnd), state)
    if (newline === -1 || newline >= end) break
    lineStart = newline + 1
  }
  return state
}

/** The line that reopens `fence` in the next message. */
const reopenLine = (fence: OpenFence): string => {
  const info = fence.info.length <= MAX_REOPEN_INFO ? fence.info : (fence.info.split(/\s/)[0] ?? "").slice(0, MAX_REOPEN_INFO)
  // A space keeps an info string that starts with the fence character from lengthening the marker.
  const separator = info.startsWith("`") || info.startsWith("~") ? " " : ""
  return `${fence.indent}${fence.marker}${separator}${info}`
}

const reopenPrefix = (fence: OpenFence | undefined): string => fence === undefined ? "" : `${reopenLine(fence)}\n`

/** What closes `fence` after `body` (a newline first unless the body already ends a line). */
const closer = (body: string, fence: OpenFence | undefined): string =>
  fence === undefined ? "" : `${body.endsWith("\n") || body.length === 0 ? "" : "\n"}${fence.marker}`

/**
 * A line break at `at` that would end the message right after a fence's opening line moves
 * before that line (an empty code block helps nobody) when the message stays over `floor` long.
 */
const avoidTrailingOpener = (window: string, at: number, floor: number, fence: OpenFence | undefined): number => {
  const lineStart = window.lastIndexOf("\n", at - 2) + 1
  if (lineStart <= floor) return at
  const before = fenceStateAt(window, 0, lineStart, fence)
  const opens = before === undefined && fenceAfterLine(window.slice(lineStart, at - 1), before) !== undefined
  return opens ? lineStart : at
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * The break position in (start, maxEnd]: after a paragraph break, else after a newline, else
 * after whitespace, else a hard cut that keeps surrogate pairs whole.
 */
const chooseBreak = (text: string, start: number, maxEnd: number, fence: OpenFence | undefined): number => {
  const window = text.slice(start, maxEnd)
  // Only break points in the back half of the window: never leave a message mostly empty.
  const floor = Math.floor(window.length / 2)
  const paragraph = window.lastIndexOf("\n\n")
  if (paragraph >= floor && paragraph > 0) return start + avoidTrailingOpener(window, paragraph + 2, floor, fence)
  const newline = window.lastIndexOf("\n")
  if (newline >= floor && newline >= 0) return start + avoidTrailingOpener(window, newline + 1, floor, fence)
  for (let i = window.length - 1; i >= floor; i--) {
    const char = window[i]
    if (char === " " || char === "\t") return start + i + 1
  }
  // Hard cut; step back off a high surrogate so its pair stays together.
  let end = maxEnd
  if (end > start + 1 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1
  return end
}

/**
 * The next message of `text` starting at `start` with `fence` open there. When the rest fits,
 * it is the whole rest (`end === text.length`), closed if a fence is left open.
 */
export const nextChunk = (text: string, start: number, fence: OpenFence | undefined, limit = DISCORD_MESSAGE_LIMIT): Chunk => {
  const prefix = reopenPrefix(fence)
  const whole = text.slice(start)
  const fenceAtEnd = fenceStateAt(text, start, text.length, fence)
  const wholeContent = `${prefix}${whole}${closer(whole, fenceAtEnd)}`
  if (wholeContent.length <= limit) {
    return { content: wholeContent, end: text.length, fenceAfter: fenceAtEnd }
  }
  // Room for the body: shrink until body + the closer it needs fit (the closer depends on the cut).
  let room = Math.max(1, limit - prefix.length)
  for (;;) {
    const end = chooseBreak(text, start, Math.min(text.length, start + room), fence)
    const body = text.slice(start, end)
    const fenceAfter = fenceStateAt(text, start, end, fence)
    const content = `${prefix}${body}${closer(body, fenceAfter)}`
    if (content.length <= limit || room <= 1) {
      return { content, end, fenceAfter }
    }
    room = Math.max(1, room - (content.length - limit))
  }
}

/** Every message of `text`, in order. Empty text gives no messages. */
export const splitMessage = (text: string, limit = DISCORD_MESSAGE_LIMIT): ReadonlyArray<string> => {
  const chunks: Array<string> = []
  let start = 0
  let fence: OpenFence | undefined = undefined
  while (start < text.length) {
    const chunk = nextChunk(text, start, fence, limit)
    chunks.push(chunk.content)
    start = chunk.end
    fence = chunk.fenceAfter
  }
  return chunks
}
