import { Effect, Ref } from "effect"
import type { ResponseSink } from "../loop/ResponseSink"
import { dim, renderNotice, renderToolActivity } from "./render"

interface TerminalSinkOptions {
  /** Reply text goes here as it streams. */
  readonly text: (chunk: string) => Effect.Effect<void>
  /** Notices and tool status lines go here. */
  readonly status: (line: string) => Effect.Effect<void>
  /** Both go to the same stream (interactive chat): keep status lines on lines of their own. */
  readonly shared: boolean
  readonly colour: boolean
}

/** Reply text one turn may print: a provider streaming more is stopped there (the reply is cut). */
export const TERMINAL_REPLY_CAPACITY = 1_048_576

interface State {
  readonly passText: string
  readonly delivered: string
  /** Where the shared cursor is: at a line start, inside reply text, or after a tool line head. */
  readonly cursor: "start" | "text" | "tool"
}

interface TerminalSink {
  readonly sink: ResponseSink["Service"]
  /** Ends the reply's last line (call once the turn is over). */
  readonly endLine: Effect.Effect<void>
}

/**
 * The terminal's ResponseSink: text is printed the moment it arrives (nothing is buffered, so
 * a discarded pass has nothing to drop), notices and tool calls become compact dim lines.
 */
export const makeTerminalSink = (options: TerminalSinkOptions): Effect.Effect<TerminalSink> =>
  Effect.gen(function*() {
    const state = yield* Ref.make<State>({ passText: "", delivered: "", cursor: "start" })
    const cursorAt = (text: string): State["cursor"] => (text.endsWith("\n") ? "start" : "text")

    const toLineStart = Effect.flatMap(Ref.get(state), (s) =>
      options.shared && s.cursor !== "start"
        ? Effect.andThen(options.text("\n"), Ref.update(state, (current) => ({ ...current, cursor: "start" as const })))
        : Effect.void)

    const statusLine = (line: string) =>
      Effect.andThen(toLineStart, options.status(`${dim(line, options.colour)}\n`))

    const sink: ResponseSink["Service"] = {
      write: (delta) =>
        Effect.gen(function*() {
          if (delta.length === 0) return
          const s = yield* Ref.get(state)
          if (options.shared && s.cursor === "tool") yield* options.status("\n")
          yield* options.text(delta)
          yield* Ref.set(state, { passText: s.passText + delta, delivered: s.delivered + delta, cursor: cursorAt(delta) })
        }),
      endPass: () => Ref.modify(state, (s) => [s.passText, { ...s, passText: "" }]),
      delivered: Effect.map(Ref.get(state), (s) => s.delivered),
      capacity: TERMINAL_REPLY_CAPACITY,
      notice: (notice) => statusLine(renderNotice(notice)),
      toolActivity: (activity) =>
        Effect.gen(function*() {
          const line = renderToolActivity(activity)
          if (activity._tag === "Started") {
            yield* toLineStart
            yield* options.status(dim(`${line} …`, options.colour))
            if (options.shared) yield* Ref.update(state, (s) => ({ ...s, cursor: "tool" as const }))
            else yield* options.status("\n")
            return
          }
          const s = yield* Ref.get(state)
          if (options.shared && s.cursor === "tool") {
            yield* options.status(` ${dim(line, options.colour)}\n`)
            yield* Ref.update(state, (current) => ({ ...current, cursor: "start" as const }))
          } else {
            yield* statusLine(`  ${line}`)
          }
        })
    }

    const endLine = Effect.gen(function*() {
      const s = yield* Ref.getAndUpdate(state, (current) => ({ ...current, cursor: "start" as const }))
      if (s.cursor === "text") yield* options.text("\n")
      if (s.cursor === "tool") yield* options.status("\n")
    })

    return { sink, endLine }
  })
