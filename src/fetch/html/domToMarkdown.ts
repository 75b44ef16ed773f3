/**
 * DOM → Markdown in one iterative walk (no recursion: the explicit stack lives on the heap, so
 * nesting can never overflow the call stack) and linear work per node. Output: ATX headings,
 * `-` bullets, fenced code (language from `language-*` / `lang-*` classes), inline links with
 * absolute URLs, GFM pipe tables, `>` quotes. Script, style, noscript and template never
 * contribute text. Stops adding blocks once `maxChars` is reached.
 */

/** The slice of the DOM the walk reads (linkedom's nodes satisfy it). */
export interface DomNode {
  readonly nodeType: number
  readonly nodeName: string
  readonly firstChild: DomNode | null
  readonly nextSibling: DomNode | null
  readonly textContent: string | null
  readonly getAttribute?: (name: string) => string | null
}

const ELEMENT = 1
const TEXT = 3

const ALWAYS_SKIPPED = new Set([
  "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed", "head",
  "title", "select", "button", "input", "textarea", "audio", "video", "map", "dialog", "nav"
])

/** Site chrome dropped when the walk starts at `<body>` (no `<main>`/`<article>` was found). */
export const CHROME = new Set(["header", "footer", "aside"])

const BLOCKS = new Set([
  "p", "div", "section", "article", "main", "header", "footer", "aside", "figure", "figcaption", "address",
  "details", "summary", "dl", "dt", "dd", "form", "fieldset", "legend", "center", "body", "html", "hgroup",
  "caption", "tbody", "thead", "tfoot", "search"
])

const EMPHASIS: Readonly<Record<string, string>> = {
  // `*` rather than `_`: it also works inside a word.
  strong: "**", b: "**", em: "*", i: "*", del: "~~", s: "~~", strike: "~~"
}

interface Container {
  readonly marker: string
  readonly indent: string
  pending: boolean
}

interface TableState {
  readonly rows: Array<Array<string>>
  row: Array<string> | undefined
}

interface MarkdownResult {
  readonly markdown: string
  readonly truncated: boolean
}

const attribute = (node: DomNode, name: string): string | null =>
  node.getAttribute === undefined ? null : node.getAttribute(name)

const isHidden = (node: DomNode): boolean =>
  attribute(node, "hidden") !== null ||
  attribute(node, "aria-hidden") === "true" ||
  /display\s*:\s*none/i.test(attribute(node, "style") ?? "")

const codeLanguage = (node: DomNode): string => {
  const classes = `${attribute(node, "class") ?? ""} ${attribute(node.firstChild ?? node, "class") ?? ""}`
  const match = /(?:^|\s)(?:language|lang)-([\w+#.-]{1,30})/.exec(classes)
  return match?.[1] ?? ""
}

const longestRun = (text: string, char: string): number => {
  let longest = 0
  let current = 0
  for (let index = 0; index < text.length; index++) {
    current = text[index] === char ? current + 1 : 0
    if (current > longest) longest = current
  }
  return longest
}

const linkTarget = (href: string | null, baseUrl: URL | undefined): string | undefined => {
  if (href === null) return undefined
  const trimmed = href.trim()
  if (trimmed === "" || trimmed.startsWith("#")) return undefined
  if (!URL.canParse(trimmed, baseUrl?.href)) return undefined
  const url = new URL(trimmed, baseUrl)
  return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:"
    ? url.href.replace(/[()\s]/g, (char) => encodeURIComponent(char))
    : undefined
}

export const domToMarkdown = (
  root: DomNode,
  options: { readonly baseUrl?: URL; readonly maxChars: number; readonly skip?: ReadonlySet<string> }
): MarkdownResult => {
  const skip = options.skip ?? new Set<string>()
  let output = ""
  let truncated = false
  // The inline buffer is a list of parts with its last character tracked: indexing a string that
  // grew by `+=` flattens it each time, which made long paragraphs quadratic.
  let parts: Array<string> = []
  let lastChar = "\n"
  /** Non-space characters appended so far (an empty wrapper is one nothing visible went into). */
  let visible = 0
  const push = (text: string): void => {
    if (text === "") return
    parts.push(text)
    lastChar = text[text.length - 1] ?? lastChar
    if (/\S/.test(text)) visible++
  }
  /** Bumped on every flush, so a wrapper can tell its opening went out with an earlier block. */
  let generation = 0
  const takeInline = (): string => {
    const text = parts.join("")
    parts = []
    generation++
    lastChar = "\n"
    return text
  }
  const containers: Array<Container> = []
  const lists: Array<{ readonly ordered: boolean; next: number }> = []
  let table: TableState | undefined
  let tableDepth = 0
  /** Container depth of the last block written. */
  let lastDepth = 0
  let cellOpen = false

  const appendText = (text: string): void => {
    push(text.startsWith(" ") && (lastChar === " " || lastChar === "\n") ? text.slice(1) : text)
  }

  const emitLines = (lines: ReadonlyArray<string>): void => {
    if (cellOpen) {
      appendText(` ${lines.join(" ").trim()} `)
      return
    }
    if (truncated) return
    // List items follow each other line by line; a list is set apart from what came before it.
    const tight = containers.length > 0 && lastDepth > 0 && containers[containers.length - 1]?.marker !== "> "
    lastDepth = containers.length
    let block = output.length === 0 ? "" : tight ? "\n" : "\n\n"
    for (let index = 0; index < lines.length; index++) {
      let prefix = ""
      for (const container of containers) {
        prefix += container.pending ? container.marker : container.indent
        container.pending = false
      }
      block += (index === 0 ? "" : "\n") + (prefix + (lines[index] ?? "")).trimEnd()
    }
    output += block
    if (output.length >= options.maxChars) truncated = true
  }

  const flushInline = (): void => {
    if (cellOpen) {
      appendText(" ")
      return
    }
    const text = takeInline().trim()
    if (text === "") return
    emitLines(text.split("\n").map((line) => line.trim()).filter((line, index, all) => line !== "" || (index > 0 && index < all.length - 1)))
  }

  /** Opens an inline wrapper (`**`, `[`); the returned function closes it. */
  const openWrapper = (open: string, close: string): (() => void) => {
    const index = parts.length
    const visibleBefore = visible
    const openedIn = generation
    parts.push(open)
    lastChar = open[open.length - 1] ?? lastChar
    return () => {
      if (generation !== openedIn) return
      // Nothing visible inside: drop the wrapper.
      if (visible === visibleBefore) {
        parts[index] = ""
        return
      }
      const trailing = lastChar === " "
      if (trailing) {
        const last = parts.length - 1
        parts[last] = (parts[last] ?? "").slice(0, -1)
      }
      push(close + (trailing ? " " : ""))
    }
  }

  const enterTable = (name: string): (() => void) | undefined => {
    if (name === "table") {
      flushInline()
      tableDepth++
      if (tableDepth > 1 || cellOpen) return () => void (tableDepth--, appendText(" "))
      table = { rows: [], row: undefined }
      return () => {
        tableDepth--
        const finished: TableState | undefined = table
        table = undefined
        if (finished === undefined || finished.rows.length === 0) return
        const columns = Math.max(...finished.rows.map((row) => row.length))
        const line = (cells: ReadonlyArray<string>) =>
          `| ${Array.from({ length: columns }, (_, index) => cells[index] ?? "").join(" | ")} |`
        const [header = [], ...body] = finished.rows
        emitLines([line(header), line(Array.from({ length: columns }, () => "---")), ...body.map(line)])
      }
    }
    if (tableDepth !== 1 || table === undefined) {
      return name === "tr" || name === "td" || name === "th" ? () => appendText(" ") : undefined
    }
    const state = table
    if (name === "tr") {
      if (!cellOpen) flushInline()
      state.row = []
      return () => {
        if (state.row !== undefined && state.row.length > 0) state.rows.push(state.row)
        state.row = undefined
      }
    }
    if (name === "td" || name === "th") {
      if (state.row === undefined) state.row = []
      const row = state.row
      takeInline()
      cellOpen = true
      return () => {
        row.push(takeInline().replace(/\s+/g, " ").trim().replace(/\|/g, "\\|"))
        cellOpen = false
      }
    }
    return undefined
  }

  /** Handles one element; returns whether to walk its children and what to do after them. */
  const enter = (node: DomNode): { readonly descend: boolean; readonly exit?: () => void } => {
    const name = node.nodeName.toLowerCase()
    if (ALWAYS_SKIPPED.has(name) || skip.has(name) || isHidden(node)) return { descend: false }

    if (name === "table" || name === "tr" || name === "td" || name === "th") {
      const exit = enterTable(name)
      return exit === undefined ? { descend: true } : { descend: true, exit }
    }

    const heading = /^h([1-6])$/.exec(name)
    if (heading !== null) {
      flushInline()
      return {
        descend: true,
        exit: () => {
          const text = takeInline().replace(/\s+/g, " ").trim()
          if (text !== "") emitLines([cellOpen ? text : `${"#".repeat(Number(heading[1]))} ${text}`])
        }
      }
    }

    const emphasis = EMPHASIS[name]
    if (emphasis !== undefined) {
      return { descend: true, exit: openWrapper(emphasis, emphasis) }
    }

    switch (name) {
      case "br":
        push(cellOpen ? " " : "\n")
        return { descend: false }
      case "hr":
        flushInline()
        emitLines(["---"])
        return { descend: false }
      case "pre": {
        flushInline()
        const code = (node.textContent ?? "").replace(/\n$/, "")
        if (cellOpen) {
          appendText(` ${code.replace(/\s+/g, " ")} `)
          return { descend: false }
        }
        const fence = "`".repeat(Math.max(3, longestRun(code, "`") + 1))
        emitLines([`${fence}${codeLanguage(node)}`, ...code.split("\n"), fence])
        return { descend: false }
      }
      case "code":
      case "kbd":
      case "samp": {
        const code = (node.textContent ?? "").replace(/\s+/g, " ")
        if (code.trim() === "") return { descend: false }
        const ticks = "`".repeat(longestRun(code, "`") + 1)
        const padded = code.startsWith("`") || code.endsWith("`") ? ` ${code} ` : code
        appendText(`${ticks}${padded}${ticks}`)
        return { descend: false }
      }
      case "a": {
        const target = linkTarget(attribute(node, "href"), options.baseUrl)
        if (target === undefined) return { descend: true }
        return { descend: true, exit: openWrapper("[", `](${target})`) }
      }
      case "img": {
        const alt = (attribute(node, "alt") ?? "").replace(/\s+/g, " ").trim()
        const src = linkTarget(attribute(node, "src"), options.baseUrl)
        // Decorative images and data: URIs would only cost tokens.
        if (alt !== "" && src !== undefined) appendText(`![${alt.replace(/[[\]]/g, "")}](${src})`)
        else if (alt !== "") appendText(alt)
        return { descend: false }
      }
      case "ul":
      case "ol": {
        flushInline()
        // A list that is not nested in an item starts a new block.
        lastDepth = Math.min(lastDepth, containers.length)
        const start = Number.parseInt(attribute(node, "start") ?? "1", 10)
        lists.push({ ordered: name === "ol", next: Number.isFinite(start) ? start : 1 })
        return {
          descend: true,
          exit: () => {
            flushInline()
            lists.pop()
          }
        }
      }
      case "li": {
        flushInline()
        if (cellOpen) return { descend: true, exit: () => appendText("; ") }
        const list = lists[lists.length - 1]
        const marker = list?.ordered === true ? `${list.next++}. ` : "- "
        const container: Container = { marker, indent: " ".repeat(marker.length), pending: true }
        containers.push(container)
        return {
          descend: true,
          exit: () => {
            flushInline()
            if (container.pending) emitLines([""])
            containers.pop()
          }
        }
      }
      case "blockquote": {
        flushInline()
        if (cellOpen) return { descend: true }
        containers.push({ marker: "> ", indent: "> ", pending: true })
        return {
          descend: true,
          exit: () => {
            flushInline()
            containers.pop()
          }
        }
      }
      default:
        if (BLOCKS.has(name)) {
          flushInline()
          return { descend: true, exit: flushInline }
        }
        return { descend: true }
    }
  }

  const stack: Array<{ next: DomNode | null; readonly exit: (() => void) | undefined }> = [
    { next: root.firstChild, exit: undefined }
  ]
  while (stack.length > 0 && !truncated) {
    const top = stack[stack.length - 1]
    if (top === undefined) break
    const node = top.next
    if (node === null) {
      stack.pop()
      top.exit?.()
      continue
    }
    top.next = node.nextSibling
    if (node.nodeType === TEXT) {
      appendText((node.textContent ?? "").replace(/\s+/g, " "))
    } else if (node.nodeType === ELEMENT) {
      const step = enter(node)
      if (step.descend && node.firstChild !== null) stack.push({ next: node.firstChild, exit: step.exit })
      else step.exit?.()
    }
  }
  flushInline()
  return { markdown: output.slice(0, options.maxChars), truncated }
}
