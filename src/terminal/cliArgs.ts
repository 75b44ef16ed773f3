import { Result } from "effect"

/** What `npm start -- …` asked for (docs/architecture.md, Public contracts). */
export type CliCommand =
  | { readonly _tag: "Interactive" }
  | { readonly _tag: "Once"; readonly text: string; readonly json: boolean; readonly images: ReadonlyArray<string> }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }

export const USAGE = "usage: npm start [--silent] -- [--once \"TEXT\" [--json] [--image FILE]...] [--help] [--version]"

/** The options part of `--help` (the environment part comes from the settings catalogue). */
export const OPTIONS = [
  "  --once \"TEXT\"   run exactly one turn in the terminal and exit (0 when it completed, 1 otherwise)",
  "  --json          with --once: stdout carries exactly one JSON line, the turn report",
  "  --image FILE    with --once: attach an image (repeatable)",
  "  --help, -h      this help",
  "  --version       print the version"
].join("\n")

/**
 * Parses the command line: nothing ⇒ interactive chat; `--once TEXT [--json] [--image FILE]…`
 * (or `--once=TEXT`, `--image=FILE`) ⇒ one turn, with those images attached; `--help`;
 * `--version`. Anything else is a usage error (one line).
 */
export const parseCliArgs = (argv: ReadonlyArray<string>): Result.Result<CliCommand, string> => {
  let once: string | undefined
  let json = false
  const images: Array<string> = []
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? ""
    if (arg === "--help" || arg === "-h") return Result.succeed({ _tag: "Help" })
    if (arg === "--version") return Result.succeed({ _tag: "Version" })
    if (arg === "--json") {
      json = true
    } else if (arg === "--once") {
      const text = argv[index + 1]
      if (text === undefined) return Result.fail(`--once needs the message text. ${USAGE}`)
      once = text
      index++
    } else if (arg.startsWith("--once=")) {
      once = arg.slice("--once=".length)
    } else if (arg === "--image") {
      const file = argv[index + 1]
      if (file === undefined || file.trim() === "") return Result.fail(`--image needs a file. ${USAGE}`)
      images.push(file)
      index++
    } else if (arg.startsWith("--image=")) {
      const file = arg.slice("--image=".length)
      if (file.trim() === "") return Result.fail(`--image needs a file. ${USAGE}`)
      images.push(file)
    } else {
      return Result.fail(`unknown argument "${arg}". ${USAGE}`)
    }
  }
  if (once === undefined) {
    if (json) return Result.fail(`--json only applies to --once. ${USAGE}`)
    if (images.length > 0) return Result.fail(`--image only applies to --once (use /attach FILE in the chat). ${USAGE}`)
    return Result.succeed({ _tag: "Interactive" })
  }
  if (once.trim().length === 0) return Result.fail(`--once needs a non-empty message. ${USAGE}`)
  return Result.succeed({ _tag: "Once", text: once, json, images })
}
