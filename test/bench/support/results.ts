/**
 * test/bench/RESULTS.md is made of sections, one per bench file (and one for the soak), each
 * between markers and ending with the time it was written, so a run of some benches (or of the
 * soak) replaces only its own sections.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const resultsPath = join(dirname(fileURLToPath(import.meta.url)), "..", "RESULTS.md")

const begin = (name: string) => `<!-- bench: ${name} -->`
const end = (name: string) => `<!-- /bench: ${name} -->`

/** A section for `name` (a bench file, or `soak.ts`), stamped with the time it was written. */
export const stampSection = (name: string, body: string, wallSeconds?: number): string =>
  `${begin(name)}\n${body.trim()}\n\n_${name}: written ${new Date().toISOString()}` +
  `${wallSeconds === undefined ? "" : `, wall time ${wallSeconds.toFixed(0)} s`}._\n${end(name)}\n`

/** The sections of RESULTS.md as it is, by name (empty when it has none). */
export const readSections = (): { readonly text: string; readonly sections: Map<string, string> } => {
  const text = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : ""
  const sections = new Map<string, string>()
  for (const match of text.matchAll(/<!-- bench: (\S+) -->[\s\S]*?<!-- \/bench: \1 -->\n?/g)) {
    sections.set(match[1]!, match[0].endsWith("\n") ? match[0] : `${match[0]}\n`)
  }
  return { text, sections }
}

export const resultsHeader = (note: string): string =>
  "# Benchmark results\n\n" +
  `Written by \`npm run bench\` and \`npm run soak\` (Node ${process.version}, ${process.platform}/${process.arch}); ${note}. ` +
  "`npm run bench -- <name>` rewrites only the sections of the benches it runs and `npm run soak` only the soak's; " +
  "each section ends with the time it was written.\n"

/** Sections in name order, the soak last. */
export const composeResults = (header: string, sections: ReadonlyMap<string, string>): string => {
  const names = [...sections.keys()].sort((a, b) => (a === "soak.ts" ? 1 : b === "soak.ts" ? -1 : a.localeCompare(b)))
  return [header, ...names.map((name) => sections.get(name)!)].join("\n")
}

/** Replaces (or adds) one section and keeps the rest, header included. */
export const writeSection = (name: string, body: string, wallSeconds?: number): void => {
  const { sections, text } = readSections()
  sections.set(name, stampSection(name, body, wallSeconds))
  const header = text.length > 0 && text.startsWith("# Benchmark results")
    ? text.slice(0, text.indexOf("<!-- bench:") === -1 ? text.length : text.indexOf("<!-- bench:")).trimEnd() + "\n"
    : resultsHeader(`last written by ${name} at ${new Date().toISOString()}`)
  writeFileSync(resultsPath, composeResults(header, sections))
}
