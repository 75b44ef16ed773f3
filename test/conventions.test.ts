import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, posix } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { PROVIDER_KINDS } from "../src/config/ProviderConfig"

/**
 * The rules of docs/architecture.md ("Layers and what may import what") that a machine can
 * check, and the rule that comments never cite a document outside the repository.
 *
 * PENDING_CLEANUP: folders of `src/` whose comments still cite outside documents and whose loop
 * and config rules the loop refactor is still bringing in. They are skipped by the checks that
 * name them below. Remove a folder once it is clean (the "still pending" test says when); empty
 * the list once the refactor has landed.
 */
const PENDING_CLEANUP: ReadonlyArray<string> = []

const isPending = (folder: string): boolean => PENDING_CLEANUP.includes(folder)

const srcDir = join(dirname(fileURLToPath(import.meta.url)), "..", "src")

/** Every TypeScript file under `src/`, relative to it, with `/` separators. */
const sourceFiles: ReadonlyArray<string> = readdirSync(srcDir, { recursive: true, encoding: "utf8" })
  .map((file) => file.split(/[\\/]/).join("/"))
  .filter((file) => file.endsWith(".ts"))
  .sort()

const readSource = (file: string): string => readFileSync(join(srcDir, file), "utf8")

/** The top folder of a file under `src/` (`loop` for `loop/context/budget.ts`), or undefined at the root. */
const folderOf = (file: string): string | undefined => (file.includes("/") ? file.split("/")[0] : undefined)

/** Each a way a comment cites a document that is not in the repository. */
const CITATIONS: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ["spec section", /\bspec\s*§/i],
  ["design section or decision", /\bdesign\s*(?:§|decisions?\b)/i],
  // A public standard's section (RFC 7845 §4, WHATWG HTML §9.2.6) is not a project document.
  ["bare section", /(?<!\b(?:RFC\s*\d+|HTML|ECMA-?\d+)\s*)§\s*\d/i],
  ["decision number", /\bdecisions?\s+\d/i],
  ["issue number", /\bissues?\s+#?\d/i],
  ["seed document", /\bseeds?\s+(?:\d|step\b|doc\b|["“'(])|\bseeds\//i],
  ["scenario number", /\bscenarios?\s+\d/i],
  ["spec scenario", /\bspec\s*\[\d/i],
  ["research note", /\bresearch\s+[a-z]\.\d/i],
  ["outside document", /\b(?:design|anchors)\.md\b|tomori-pipeline/i]
]

/** Any citation at all: files without one are not parsed. */
const ANY_CITATION = new RegExp(CITATIONS.map(([, pattern]) => pattern.source).join("|"), "i")

/**
 * Where the comments of a TypeScript source are, as [start, end) offsets. Every token's trivia is
 * read (the comments before it and those on the same line after it), so a comment anywhere (in
 * an empty block too) is found, and strings, templates and regular expressions never are.
 */
const commentRanges = (fileName: string, text: string): ReadonlyArray<readonly [number, number]> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const ranges = new Map<number, number>()
  const add = (found: ReadonlyArray<ts.CommentRange> | undefined) => {
    for (const range of found ?? []) ranges.set(range.pos, range.end)
  }
  const visit = (node: ts.Node): void => {
    // A JSDoc block is trivia of the token after it: read there, as text.
    if (ts.isJSDoc(node)) return
    const children = node.getChildren(source)
    if (children.length === 0) {
      add(ts.getLeadingCommentRanges(text, node.pos))
      add(ts.getTrailingCommentRanges(text, node.end))
      return
    }
    for (const child of children) visit(child)
  }
  visit(source)
  return [...ranges.entries()].sort(([a], [b]) => a - b)
}

const lineAt = (text: string, offset: number): number => text.slice(0, offset).split("\n").length

/** `line: citation kind: the comment line` for every comment line of `text` that cites an outside document. */
const citationsIn = (fileName: string, text: string): ReadonlyArray<string> => {
  if (!ANY_CITATION.test(text)) return []
  const found: Array<string> = []
  for (const [start, end] of commentRanges(fileName, text)) {
    const lines = text.slice(start, end).split("\n")
    lines.forEach((line, index) => {
      const citation = CITATIONS.find(([, pattern]) => pattern.test(line))
      if (citation !== undefined) found.push(`${lineAt(text, start) + index}: ${citation[0]}: ${line.trim()}`)
    })
  }
  return found
}

/** The `src/` files a file imports (static, dynamic and type-only imports, and re-exports). */
const importsOf = (file: string, text: string): ReadonlyArray<string> =>
  ts.preProcessFile(text, true, true).importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => posix.normalize(posix.join(posix.dirname(file), specifier)))

/** Offsets of `pattern`'s matches in code, not in comments. */
const codeMatches = (file: string, text: string, pattern: RegExp): ReadonlyArray<number> => {
  const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`)
  const offsets = [...text.matchAll(global)].map((match) => match.index)
  if (offsets.length === 0) return []
  const comments = commentRanges(file, text)
  return offsets.filter((offset) => !comments.some(([start, end]) => offset >= start && offset < end))
}

/** Edges of the core: the loop reaches none of them (docs/architecture.md, Layers). */
const EDGES: ReadonlyArray<string> = ["discord", "terminal", "mcp", "fetch"]

/** The loop's core files: the pass loop and the per-call stage, which name no feature. */
const LOOP_CORE: ReadonlyArray<string> = ["loop/runToolLoop.ts", "loop/executeToolCall.ts"]
const FEATURE_NAMES = /novelai|draft|review|sticker|short_?term_?memory|fetch_url|web_search/gi
/** "Neither file is much over 250 lines." */
const LOOP_CORE_MAX_LINES = 260

/** Every built-in tool's name: a string constant of src/tools/ that some tool is registered under (`name: CONST`). */
const registeredToolNames = (): ReadonlyArray<string> =>
  sourceFiles.filter((file) => folderOf(file) === "tools").flatMap((file) => {
    const text = readSource(file)
    const constants = new Map([...text.matchAll(/export const ([A-Z][A-Z0-9_]*) = "([a-z][a-z0-9_]*)"/g)].map((match) => [match[1], match[2]]))
    return [...text.matchAll(/\bname: ([A-Z][A-Z0-9_]*),/g)].flatMap((match) => {
      const name = constants.get(match[1] ?? "")
      return name === undefined ? [] : [name]
    })
  })

/** Every provider family's name (`LLM_PROVIDER`), and its vendor (`openai` of `openai-compatible`). */
const registeredProviderNames = (): ReadonlyArray<string> =>
  PROVIDER_KINDS.flatMap((kind) => [kind, kind.split("-")[0] ?? kind])

/** `file:line: name` for every tool or provider name in `text` (any case, code and comments alike). */
const namesIn = (file: string, text: string, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lower = text.toLowerCase()
  return [...new Set(names)].flatMap((name) => {
    const at = lower.indexOf(name.toLowerCase())
    return at < 0 ? [] : [`src/${file}:${lineAt(text, at)}: ${name}`]
  })
}

describe("the convention checker", () => {
  it("finds citations in line, block and JSDoc comments, in empty blocks too, and names the line", () => {
    const text = [
      "// the stop response (spec §2.8)",
      "const a = 1 /* design decision 15 */",
      "/**",
      " * Delivery (issue 11).",
      " */",
      "const f = () => {",
      "  // seed 002: blocked users",
      "}",
      "const g = { /* scenario 77 */ }"
    ].join("\n")
    assert.deepStrictEqual(citationsIn("a.ts", text).map((finding) => finding.split(":")[0]), ["1", "2", "4", "7", "9"])
  })

  it("ignores strings, templates, regular expressions, public standards and the rule stated in words", () => {
    const text = [
      "const s = \"spec §2.8 // decision 4\"",
      "const t = `https://host/${s}// issue 11`",
      "const r = /decision 4/",
      "/** Opus granule positions (RFC 7845 §4); event streams (WHATWG HTML §9.2.6). */",
      "// A decision the reviewer made; the seed of a random number; see docs/architecture.md, Delivery."
    ].join("\n")
    assert.deepStrictEqual(citationsIn("b.ts", text), [])
  })

  it("reads every kind of import a file makes", () => {
    const text = [
      "import { a } from \"../discord/A\"",
      "import type { B } from \"../mcp/B\"",
      "export { c } from \"./c\"",
      "const d = () => import(\"../fetch/D\")",
      "import { Effect } from \"effect\""
    ].join("\n")
    assert.deepStrictEqual(importsOf("loop/x.ts", text), ["discord/A", "mcp/B", "loop/c", "fetch/D"])
  })
})

describe("comments never cite a document outside the repository", () => {
  it("no comment in src/ cites a spec section, an issue, a design decision or a seed document", () => {
    const findings = sourceFiles
      .filter((file) => !isPending(folderOf(file) ?? ""))
      .flatMap((file) => citationsIn(file, readSource(file)).map((finding) => `src/${file}:${finding}`))
    assert.deepStrictEqual(findings, [], "state the rule itself, or point to a section of docs/architecture.md")
  })

  it.each(PENDING_CLEANUP)("src/%s/ is still pending (remove it from PENDING_CLEANUP once it is clean)", (folder) => {
    const cited = sourceFiles.filter((file) => folderOf(file) === folder).some((file) => citationsIn(file, readSource(file)).length > 0)
    assert.isTrue(cited, `src/${folder}/ cites no outside document any more: remove "${folder}" from PENDING_CLEANUP`)
  })
})

describe("layers (docs/architecture.md, Layers and what may import what)", () => {
  it("src/loop/ imports no edge: discord/, terminal/, mcp/, fetch/", () => {
    const violations = sourceFiles
      .filter((file) => folderOf(file) === "loop")
      .flatMap((file) =>
        importsOf(file, readSource(file))
          .filter((target) => EDGES.includes(folderOf(target) ?? ""))
          .map((target) => `src/${file} imports src/${target}`)
      )
    assert.deepStrictEqual(violations, [])
  })

  it("src/domain/ imports nothing else from src/", () => {
    const violations = sourceFiles
      .filter((file) => folderOf(file) === "domain")
      .flatMap((file) =>
        importsOf(file, readSource(file))
          .filter((target) => folderOf(target) !== "domain")
          .map((target) => `src/${file} imports src/${target}`)
      )
    assert.deepStrictEqual(violations, [])
  })

  // Not gated by PENDING_CLEANUP: the config leaf holds already (only its comments are pending).
  it("src/config/ is a leaf: every file under it imports only config/, domain/ and packages", () => {
    const violations = sourceFiles
      .filter((file) => folderOf(file) === "config")
      .flatMap((file) =>
        importsOf(file, readSource(file))
          .filter((target) => folderOf(target) !== "config" && folderOf(target) !== "domain")
          .map((target) => `src/${file} imports src/${target}`)
      )
    assert.deepStrictEqual(violations, [])
  })

  /** What makes a loop core file fail: a tool, provider or feature name, or too many lines. */
  const coreViolations = (file: string): ReadonlyArray<string> => {
    const text = readSource(file)
    const lines = text.split("\n").length
    return [
      ...namesIn(file, text, [...registeredToolNames(), ...registeredProviderNames()]),
      ...[...text.matchAll(FEATURE_NAMES)].map((match) => `src/${file}:${lineAt(text, match.index)}: ${match[0]}`),
      ...(lines > LOOP_CORE_MAX_LINES ? [`src/${file}: ${lines} lines (at most ${LOOP_CORE_MAX_LINES})`] : [])
    ]
  }

  it("the loop core names no registered tool and no provider, and stays short", () => {
    // The lists are real: the check cannot pass by finding nothing to look for.
    assert.includeMembers([...registeredToolNames()], ["update_short_term_memory", "select_sticker_for_response", "block_user", "web_search"])
    assert.includeMembers([...registeredProviderNames()], ["novelai", "openai", "anthropic", "google"])
    const violations = LOOP_CORE.flatMap(coreViolations)
    assert.deepStrictEqual(violations, [])
  })

  it("only the entry points run effects: no Effect.runPromise / runSync / runFork elsewhere", () => {
    const entryPoints = ["main.ts", "sharded.ts"]
    const violations = sourceFiles
      .filter((file) => !entryPoints.includes(file))
      .flatMap((file) => {
        const text = readSource(file)
        return codeMatches(file, text, /\bEffect\.run(?:Promise|PromiseExit|Sync|SyncExit|Fork|Callback)\b/)
          .map((offset) => `src/${file}:${lineAt(text, offset)}`)
      })
    assert.deepStrictEqual(violations, [], "use a runtime captured inside the program (Runtime.runFork(runtime))")
  })

  it("console only in src/terminal/", () => {
    const violations = sourceFiles
      .filter((file) => folderOf(file) !== "terminal")
      .flatMap((file) => {
        const text = readSource(file)
        return codeMatches(file, text, /\bconsole\s*\./).map((offset) => `src/${file}:${lineAt(text, offset)}`)
      })
    assert.deepStrictEqual(violations, [], "log through Effect's logger")
  })
})
