/**
 * `src/main.ts` as an operator runs it, in a child process with the given environment: the
 * real composition root (signals, exit codes, health server and all). Its output is collected;
 * the process is stopped with SIGTERM when the scope closes if it still runs.
 */
import { Deferred, Duration, Effect, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export interface BotProcess {
  readonly child: ChildProcess
  /** stdout and stderr as they arrived. */
  readonly output: () => string
  /** Resolves with the exit code (null after a signal the process did not handle). */
  readonly exited: Deferred.Deferred<number | null>
}

export const startBotProcess = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const exited = yield* Deferred.make<number | null>()
      const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "main.ts")], {
        cwd: root,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const chunks: Array<string> = []
      child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk.toString()))
      child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk.toString()))
      child.once("exit", (code) => Deferred.doneUnsafe(exited, Effect.succeed(code)))
      return { child, output: () => chunks.join(""), exited } satisfies BotProcess
    }),
    ({ child, exited }) =>
      child.exitCode !== null || child.signalCode !== null
        ? Effect.void
        : Effect.andThen(Effect.sync(() => child.kill("SIGKILL")), Deferred.await(exited))
  )

/** Sends SIGTERM and waits for the exit code. */
export const stopBotProcess = (bot: BotProcess) =>
  Effect.andThen(Effect.sync(() => bot.child.kill("SIGTERM")), Deferred.await(bot.exited))

/** Waits (real time) until the output matches `pattern`; returns the match. Fails with the output otherwise. */
export const awaitOutput = (bot: BotProcess, pattern: RegExp, timeout: Duration.Input = Duration.seconds(60)) =>
  Effect.suspend(() => {
    const match = pattern.exec(bot.output())
    return match === null ? Effect.fail("not yet" as const) : Effect.succeed(match)
  }).pipe(
    Effect.retry(Schedule.spaced(Duration.millis(50))),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new Error(`no ${pattern} in the bot's output:\n${bot.output()}`)) }),
    Effect.orDie
  )
