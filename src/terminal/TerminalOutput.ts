import { Context, Effect, Layer } from "effect"

/**
 * Where the terminal front writes. The live layer writes to the process streams (the only
 * place loopcord prints directly); tests capture.
 */
export class TerminalOutput extends Context.Tag("loopcord/terminal/TerminalOutput")<TerminalOutput, {
  readonly stdout: (text: string) => Effect.Effect<void>
  readonly stderr: (text: string) => Effect.Effect<void>
  /** Status lines may use ANSI dimming (stdout is a colour terminal). */
  readonly colour: boolean
}>() {
  static readonly live = Layer.sync(TerminalOutput, () => ({
    stdout: (text: string) => Effect.sync(() => void process.stdout.write(text)),
    stderr: (text: string) => Effect.sync(() => void process.stderr.write(text)),
    colour: process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined
  }))
}
