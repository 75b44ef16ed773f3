import { Effect, Option } from "effect"
import { fstatSync, type Stats } from "node:fs"
import { isatty } from "node:tty"

/**
 * What the terminal chat would read from stdin:
 * - `terminal`: someone typing;
 * - `piped`: lines from a pipe, a socket or a file, answered one by one until end of input;
 * - `none`: nothing can ever arrive: stdin is /dev/null (a container started without `-i`, a
 *   service manager) or closed. The chat would read end of input at once and exit 0, and a
 *   restart policy would start it again forever.
 */
type ChatInput = "terminal" | "piped" | "none"

/** The rule, on what fstat(0) said (undefined: no stdin at all). */
export const classifyChatInput = (stats: Pick<Stats, "isFIFO" | "isSocket" | "isFile"> | undefined, tty: boolean): ChatInput => {
  if (tty) return "terminal"
  if (stats === undefined) return "none"
  return stats.isFIFO() || stats.isSocket() || stats.isFile() ? "piped" : "none"
}

/** stdin of this process, looked at without opening it as a stream (nothing is read). */
export const chatInput: Effect.Effect<ChatInput> = Effect.try(() => fstatSync(0)).pipe(
  Effect.option,
  Effect.map((stats) => classifyChatInput(Option.getOrUndefined(stats), isatty(0)))
)
