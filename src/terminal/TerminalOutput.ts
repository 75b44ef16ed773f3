import { Context, Effect, Layer } from "effect"

/**
 * Where the terminal front writes. The live layer writes to the process streams (the only
 * place loopcord prints directly); tests capture.
 */
export class TerminalOutput extends Context.Service<TerminalOutput, {
  readonly stdout: (text: string) => Effect.Effect<void>
  readonly stderr: (text: string) => Effect.Effect<void>
  /** Status lines may use ANSI dimming (stdout is a colour terminal). */
  readonly colour: boolean
}>()("loopcord/terminal/TerminalOutput") {
  static readonly live = Layer.sync(TerminalOutput, () => ({
    stdout: (text: string) => Effect.sync(() => void process.stdout.write(text)),
    stderr: (text: string) => Effect.sync(() => void process.stderr.write(text)),
    colour: process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined
  }))
}

/** How long an exit waits for stdout and stderr to take what was written (a reader that stopped reading). */
const STDIO_FLUSH_TIMEOUT_MS = 30_000

/**
 * Calls `done` once stdout and stderr have handed everything written to the OS, or after
 * `timeoutMs`. Writes to a pipe complete asynchronously: exiting before they do cuts a long
 * `--json` report short (the reader gets the first 64 KiB). A stream that fails (EPIPE: the
 * reader is gone) counts as done.
 */
export const whenStdioFlushed = (done: () => void, timeoutMs: number = STDIO_FLUSH_TIMEOUT_MS): void => {
  let waiting = 2
  let called = false
  const finish = () => {
    if (called) return
    called = true
    clearTimeout(timer)
    done()
  }
  const timer = setTimeout(finish, timeoutMs)
  for (const stream of [process.stdout, process.stderr]) {
    let settled = false
    const settle = () => {
      if (settled) return
      settled = true
      waiting -= 1
      if (waiting === 0) finish()
    }
    if (stream.destroyed || !stream.writable) {
      settle()
      continue
    }
    stream.once("error", settle)
    // An empty write completes after every earlier one (writes are flushed in order).
    stream.write("", settle)
  }
}
