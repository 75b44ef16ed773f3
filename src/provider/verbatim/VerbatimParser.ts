import { Predicate } from "effect"
import type { FunctionCall } from "../../domain/FunctionCall"
import type { ToolDeclaration } from "../../domain/ToolDeclaration"
import { parseJsonOrUndefined } from "../jsonFrame"
import { maxCallsPerPass } from "../toolArguments"

/**
 * Streaming parser for tool calls written as text (docs/architecture.md, "Verbatim tool calls").
 * Recognizes `name({json})`, `name("string")` (only when the tool has exactly one required
 * parameter and it is a string) and `name()` (only when nothing is required), bare or wrapped in
 * a code span (1–3 backticks) or a fenced block with an optional language line. Prose before the
 * first call is emitted first; the calls after it (a model making several at once) are parsed
 * the same way, up to `maxCallsPerPass`, and prose after the first call is never shown.
 *
 * Text that could still become a call (an opener, a partial tool name) is held back, never
 * shown and then retracted. Held text beyond `maxBufferChars`, an unbalanced call at the end,
 * an unknown tool or arguments that break the rules are released as prose, unchanged.
 *
 * One parser serves one stream and is driven by one fiber, so it keeps plain mutable state.
 */

/** What the parser knows about one exposed tool. */
interface VerbatimTool {
  readonly name: string
  readonly noneRequired: boolean
  /** The parameter a bare string argument fills, when the tool has exactly one required string. */
  readonly singleStringParam: string | undefined
}

export const verbatimToolsFrom = (tools: ReadonlyArray<ToolDeclaration>): ReadonlyArray<VerbatimTool> =>
  tools.map((tool) => {
    const required = tool.parameters.required ?? []
    const only = required.length === 1 ? required[0]! : undefined
    const schema = only === undefined ? undefined : tool.parameters.properties[only]
    const isString = Predicate.isObject(schema) && schema.type === "string"
    return { name: tool.name, noneRequired: required.length === 0, singleStringParam: isString ? only : undefined }
  })

export type VerbatimOutput =
  | { readonly _tag: "Prose"; readonly text: string }
  | { readonly _tag: "Call"; readonly call: FunctionCall }

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const isWordChar = (char: string | undefined): boolean => char !== undefined && /[A-Za-z0-9_]/.test(char)

/** An opener right before a tool name: a fence line (```lang + newline) or 1–3 backticks. */
const openerBefore = /(?:```[\w+.-]*[ \t]*\r?\n[ \t]*|`{1,3})$/
const fencePartial = /^```[\w+.-]*[ \t]*\r?$/
const fenceFull = /^```[\w+.-]*[ \t]*\r?\n[ \t]*/
const spanOpener = /^`{1,3}/

type Mode =
  | { readonly _tag: "Scan" }
  /** Inside `name(`: the held call starts at buffer offset 0, balancing has looked up to `scanned`. */
  | { _tag: "Call"; readonly nameStart: number; scanned: number; depth: number; inString: boolean; escaped: boolean }
  /** As many calls as a pass may make were parsed: the rest of the text is dropped. */
  | { readonly _tag: "Done" }

/**
 * Visible characters after a call beyond which the pass is taken to be over: room for a few
 * words between calls ("and", a list marker), none for a made-up result or a whole answer.
 */
const proseAfterCallsLimit = 200

const scanning: Mode = { _tag: "Scan" }
const finished: Mode = { _tag: "Done" }

export class VerbatimParser {
  private readonly tools: ReadonlyMap<string, VerbatimTool>
  private readonly names: ReadonlyArray<string>
  private readonly anchor: RegExp | undefined
  private readonly firstChars: ReadonlySet<string>
  private readonly holdWindow: number
  /** Text not yet emitted. In `Call` mode it starts at the held call's opener. */
  private buffer = ""
  /** The last character already emitted, for the word boundary before a tool name. */
  private previous: string | undefined = undefined
  private mode: Mode = scanning
  /** Calls parsed so far; prose after the first one is dropped. */
  private calls = 0
  /** Visible characters dropped since the last call: the model has moved on from calling. */
  private droppedSinceCall = 0

  constructor(tools: ReadonlyArray<VerbatimTool>, private readonly maxBufferChars: number) {
    this.tools = new Map(tools.map((tool) => [tool.name, tool]))
    // Longest first, so `read_file_v2(` never anchors as `read_file`.
    this.names = [...this.tools.keys()].filter((name) => name.length > 0).sort((a, b) => b.length - a.length)
    this.anchor = this.names.length === 0 ? undefined : new RegExp(`(${this.names.map(escapeRegExp).join("|")})\\s*\\(`, "g")
    this.firstChars = new Set(this.names.map((name) => name[0]!))
    this.holdWindow = (this.names[0]?.length ?? 0) + 80
  }

  /** Whether a call has been parsed; prose after it is dropped. */
  get called(): boolean {
    return this.calls > 0
  }

  /**
   * The pass has said all it will call: the call cap was reached, or more than
   * `proseAfterCallsLimit` visible characters followed the last call. Nothing later is shown
   * or parsed, so the stream can be closed rather than read while the model writes on.
   */
  get ended(): boolean {
    return this.calls > 0 && this.mode._tag === "Done"
  }

  feed(text: string, out: Array<VerbatimOutput>): void {
    if (this.mode._tag === "Done" || text.length === 0) return
    this.buffer += text
    this.process(out)
  }

  /** The stream ended: whatever is held is released as prose (an unbalanced call included). */
  flush(out: Array<VerbatimOutput>): void {
    if (this.mode._tag === "Done") return
    this.emit(this.buffer.length, out)
    this.mode = scanning
  }

  private emit(length: number, out: Array<VerbatimOutput>): void {
    if (length <= 0) return
    const text = this.buffer.slice(0, length)
    this.buffer = this.buffer.slice(length)
    this.previous = text[text.length - 1]
    if (this.calls > 0) {
      this.droppedSinceCall += text.replace(/\s+/g, "").length
      if (this.droppedSinceCall > proseAfterCallsLimit) this.mode = finished
      return
    }
    const last = out[out.length - 1]
    if (last !== undefined && last._tag === "Prose") out[out.length - 1] = { _tag: "Prose", text: last.text + text }
    else out.push({ _tag: "Prose", text })
  }

  private process(out: Array<VerbatimOutput>): void {
    for (;;) {
      const mode = this.mode
      if (mode._tag === "Done") return
      if (mode._tag === "Scan") {
        if (!this.scan(out)) return
        continue
      }
      const end = this.balance(mode, out)
      if (end === "released") continue
      if (end === "more") return
      const call = this.parse(this.buffer.slice(mode.nameStart, end))
      if (call === undefined) {
        this.mode = scanning
        this.emit(end, out)
        continue
      }
      this.buffer = this.buffer.slice(end)
      // The closing paren is the character before what is scanned next (a word boundary).
      this.previous = ")"
      this.calls += 1
      this.droppedSinceCall = 0
      this.mode = this.calls >= maxCallsPerPass ? finished : scanning
      out.push({ _tag: "Call", call })
    }
  }

  /** Looks for the next call; returns true when one was entered (balancing continues). */
  private scan(out: Array<VerbatimOutput>): boolean {
    const anchor = this.anchor
    if (anchor !== undefined) {
      anchor.lastIndex = 0
      for (let match = anchor.exec(this.buffer); match !== null; match = anchor.exec(this.buffer)) {
        const nameStart = match.index
        const before = nameStart > 0 ? this.buffer[nameStart - 1] : this.previous
        if (isWordChar(before)) {
          anchor.lastIndex = nameStart + 1
          continue
        }
        const opener = openerBefore.exec(this.buffer.slice(Math.max(0, nameStart - 128), nameStart))
        const callStart = nameStart - (opener?.[0].length ?? 0)
        this.emit(callStart, out)
        const scanned = match.index + match[0].length - callStart
        this.mode = { _tag: "Call", nameStart: nameStart - callStart, scanned, depth: 1, inString: false, escaped: false }
        return true
      }
    }
    this.emit(this.holdStart(), out)
    if (this.buffer.length > this.maxBufferChars) this.emit(this.buffer.length, out)
    return false
  }

  /**
   * Advances paren balancing (quote- and escape-aware). Returns the offset just after the
   * closing paren, or "more" when more text is needed. Releases the held call as prose once it
   * grows past the buffer cap, at the same character whatever the chunking.
   */
  private balance(mode: Extract<Mode, { _tag: "Call" }>, out: Array<VerbatimOutput>): number | "more" | "released" {
    const buffer = this.buffer
    for (let index = mode.scanned; index < buffer.length; index += 1) {
      if (index + 1 > this.maxBufferChars) {
        this.mode = scanning
        this.emit(index + 1, out)
        return "released"
      }
      const char = buffer[index]
      if (mode.inString) {
        if (mode.escaped) mode.escaped = false
        else if (char === "\\") mode.escaped = true
        else if (char === "\"") mode.inString = false
      } else if (char === "\"") {
        mode.inString = true
      } else if (char === "(") {
        mode.depth += 1
      } else if (char === ")") {
        mode.depth -= 1
        if (mode.depth === 0) return index + 1
      }
    }
    mode.scanned = buffer.length
    return "more"
  }

  /** `body` is `name(...)` with balanced parens (the anchor guarantees the shape). */
  private parse(body: string): FunctionCall | undefined {
    const open = body.indexOf("(")
    const tool = this.tools.get(body.slice(0, open).trim())
    if (tool === undefined) return undefined
    const inner = body.slice(open + 1, -1).trim()
    if (inner.length === 0) return tool.noneRequired ? { name: tool.name, args: {} } : undefined
    const value = parseJsonOrUndefined(inner)
    if (inner.startsWith("{")) {
      return Predicate.isObject(value) ? { name: tool.name, args: value } : undefined
    }
    if (inner.startsWith("\"") && typeof value === "string" && tool.singleStringParam !== undefined) {
      return { name: tool.name, args: { [tool.singleStringParam]: value } }
    }
    return undefined
  }

  /** Offset where a suffix that could still grow into a call starts (buffer length if none). */
  private holdStart(): number {
    const buffer = this.buffer
    let trailingSpace = 0
    while (trailingSpace < buffer.length && /\s/.test(buffer[buffer.length - 1 - trailingSpace]!)) trailingSpace += 1
    const from = Math.max(0, buffer.length - this.holdWindow - trailingSpace)
    for (let start = from; start < buffer.length; start += 1) {
      const char = buffer[start]!
      if (char === "`") {
        if (this.couldOpen(buffer.slice(start))) return start
      } else if (this.firstChars.has(char)) {
        const before = start > 0 ? buffer[start - 1] : this.previous
        if (!isWordChar(before) && this.nameOrPrefix(buffer.slice(start))) return start
      }
    }
    return buffer.length
  }

  /** `suffix` starts with backticks: could it be an opener followed by (part of) a tool name? */
  private couldOpen(suffix: string): boolean {
    if (fencePartial.test(suffix)) return true
    const fence = fenceFull.exec(suffix)
    if (fence !== null && this.nameOrEmpty(suffix.slice(fence[0].length))) return true
    const span = spanOpener.exec(suffix)
    return span !== null && this.nameOrEmpty(suffix.slice(span[0].length))
  }

  private nameOrEmpty(rest: string): boolean {
    return rest.length === 0 || this.nameOrPrefix(rest)
  }

  /** A prefix of a tool name, or a whole tool name followed only by whitespace. */
  private nameOrPrefix(rest: string): boolean {
    for (const name of this.names) {
      if (name.startsWith(rest)) return true
      if (rest.startsWith(name) && rest.slice(name.length).trim().length === 0) return true
    }
    return false
  }
}
