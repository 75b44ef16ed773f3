import * as readline from "node:readline"
import { Clock, Data, Effect, FiberSet, Queue, Ref } from "effect"
import { ChannelQueue, type TurnFailure } from "../chat/ChannelQueue"
import { makeCollectingSink } from "../chat/CollectingSink"
import type { TurnInput, TurnSink } from "../chat/TurnInput"
import { mediaDirSetting } from "../config/MediaDirConfig"
import { ModelChoiceConfig } from "../config/ModelChoiceConfig"
import { VisionConfig } from "../config/VisionConfig"
import type { ChatMessage, ImageRef } from "../domain/ChatMessage"
import type { TurnResult } from "../domain/TurnResult"
import type { Persona } from "../domain/Persona"
import { MediaLibrary } from "../media/MediaLibrary"
import { dim, renderNotice } from "./render"
import { turnReportLine } from "./report"
import { TerminalOutput } from "./TerminalOutput"
import { attachImageFile, fileMediaOutlet } from "./TerminalMedia"
import { terminalModelCommand } from "./modelCommand"
import { TerminalApprovals } from "./TerminalApprovals"
import { makeTerminalSink, TERMINAL_REPLY_CAPACITY } from "./TerminalSink"

/** The terminal is one conversation: one channel. */
const TERMINAL_CHANNEL = "terminal"
const TERMINAL_USER = "terminal-user"

/** Images `/attach` may queue for one message. */
const MAX_PENDING_ATTACHMENTS = 8

/** Two Ctrl-C within this window exit even while a killed turn is still winding down. */
const DOUBLE_INTERRUPT_WINDOW_MS = 2_000

const baseInput = (persona: Persona, loadContext: TurnInput["loadContext"], openSink: TurnInput["openSink"]): TurnInput => ({
  channelId: TERMINAL_CHANNEL,
  guildId: undefined,
  userId: TERMINAL_USER,
  messageId: undefined,
  isDM: true,
  locale: "en",
  persona,
  loadContext,
  shouldSurfaceUserErrors: true,
  openSink
})

/** A turn that could not run at all (cancelled before it started) reported like any other. */
const failedTurn = (error: TurnFailure): TurnResult => ({
  status: error._tag === "TurnCancelledError" ? "stopped_by_user" : "error",
  text: "",
  iterations: 0,
  attempts: [],
  toolCalls: [],
  usage: undefined,
  toolResponseDelivered: false
})

/** A user message with the images attached to it (none: no `images` key). */
const userMessage = (text: string, images: ReadonlyArray<ImageRef>): ChatMessage =>
  images.length === 0 ? { role: "user", content: text } : { role: "user", content: text, images }

/**
 * `--once TEXT [--json] [--image FILE]…`: exactly one turn, the images attached to the message.
 * Without `--json` the reply streams to stdout and status lines go to stderr; with `--json`
 * stdout carries exactly one line, the turn report. Generated media are saved under MEDIA_DIR
 * (./data/media) and their paths printed on stderr. Returns the exit code: 0 iff completed.
 */
export const runOnce = Effect.fn("TerminalFront.runOnce")(function*(options: {
  readonly text: string
  readonly json: boolean
  readonly persona: Persona
  readonly images?: ReadonlyArray<string>
}) {
  const queue = yield* ChannelQueue
  const out = yield* TerminalOutput
  const library = yield* MediaLibrary
  const vision = yield* VisionConfig
  const mediaOutlet = fileMediaOutlet(yield* mediaDirSetting, (line) => out.stderr(`${line}\n`))
  // An unusable file fails the run with one line before any turn starts.
  const attached = yield* Effect.forEach(options.images ?? [], (path) => attachImageFile(library, path, vision.maxImageBytes))
  const context = Effect.succeed<ReadonlyArray<ChatMessage>>([userMessage(options.text, attached.map((file) => file.image))])

  const openSink: TurnInput["openSink"] = options.json
    ? Effect.map(makeCollectingSink({ capacity: TERMINAL_REPLY_CAPACITY }), (collected): TurnSink => ({
      sink: {
        ...collected.sink,
        notice: (notice) => Effect.andThen(collected.sink.notice(notice), out.stderr(`${renderNotice(notice)}\n`))
      },
      mediaOutlet
    }))
    : Effect.map(
      makeTerminalSink({ text: out.stdout, status: out.stderr, shared: false, colour: false }),
      (terminal): TurnSink => ({ sink: terminal.sink, finish: () => terminal.endLine, mediaOutlet })
    )

  const ticket = yield* queue.submit(baseInput(options.persona, context, openSink))
  const result = yield* ticket.result.pipe(Effect.catch((error) => Effect.succeed(failedTurn(error))))
  if (options.json) yield* out.stdout(`${turnReportLine(result)}\n`)
  return result.status === "completed" ? 0 : 1
})

type TerminalEvent = Data.TaggedEnum<{
  Line: { readonly text: string }
  Interrupt: {}
  Closed: {}
}>
const TerminalEvent = Data.taggedEnum<TerminalEvent>()

/**
 * The interactive chat (`npm start` without DISCORD_TOKEN): type a message, the reply streams
 * back; typing while a reply streams interrupts it and answers the new message next. Ctrl-C
 * kills the running turn (stream and tool); Ctrl-C with nothing running, or twice quickly,
 * exits; so do `/exit` and end of input (after the pending replies). `/attach FILE` attaches an
 * image to the next message; generated media are saved under MEDIA_DIR and their paths shown.
 * `/model` shows or picks the model chain for the session (from LLM_MODELS_ALLOWED);
 * `/approvals add NAME` makes a tool ask `[y/N]` before it runs (the next line is the answer).
 */
export const runInteractive = Effect.fn("TerminalFront.runInteractive")(function*(options: { readonly persona: Persona }) {
  const queue = yield* ChannelQueue
  const out = yield* TerminalOutput
  const events = yield* Queue.unbounded<TerminalEvent>()
  const history = yield* Ref.make<ReadonlyArray<ChatMessage>>([])
  const library = yield* MediaLibrary
  const vision = yield* VisionConfig
  const mediaDir = yield* mediaDirSetting
  // Images attached with /attach, sent with the next message (a handful: the vision budget is 8).
  const attachments = yield* Ref.make<ReadonlyArray<ImageRef>>([])
  // The model chain `/model` picked for this session (undefined: LLM_MODELS).
  const choices = yield* ModelChoiceConfig
  const chosenModels = yield* Ref.make<ReadonlyArray<string> | undefined>(undefined)
  const approvals = yield* TerminalApprovals
  const pending = yield* Ref.make(0)
  const lastInterrupt = yield* Ref.make(Number.NEGATIVE_INFINITY)
  // One fiber per submitted message, waiting for its reply (closed with the chat).
  const watchers = yield* FiberSet.make<void>()
  const runFork = Effect.runForkWith(yield* Effect.context<never>())
  const offer = (event: TerminalEvent) => runFork(Queue.offer(events, event))
  // Someone typing may interrupt a reply; lines piped in all at once are answered one by one.
  const typing = process.stdin.isTTY === true

  // Piped input can end while a reply still streams: the prompt is not shown on a closed interface.
  const inputClosed = yield* Ref.make(false)
  const rl = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const terminal = typing
      const face = readline.createInterface({ input: process.stdin, output: process.stdout, terminal })
      face.setPrompt(terminal ? "you › " : "")
      face.on("line", (text) => offer(TerminalEvent.Line({ text })))
      face.on("SIGINT", () => offer(TerminalEvent.Interrupt()))
      face.on("close", () => {
        runFork(Ref.set(inputClosed, true))
        offer(TerminalEvent.Closed())
      })
      return face
    }),
    (face) => Effect.sync(() => face.close())
  )
  const prompt = Effect.flatMap(Ref.get(inputClosed), (closed) => (closed ? Effect.void : Effect.sync(() => rl.prompt())))
  const status = (line: string) => out.stdout(`${dim(line, out.colour)}\n`)

  const submit = (text: string) =>
    Effect.gen(function*() {
      const user = userMessage(text, yield* Ref.getAndSet(attachments, []))
      const openSink: TurnInput["openSink"] = Effect.map(
        makeTerminalSink({ text: out.stdout, status: out.stdout, shared: true, colour: out.colour }),
        (terminal): TurnSink => ({
          sink: terminal.sink,
          mediaOutlet: fileMediaOutlet(mediaDir, status),
          // The reply joins the conversation before the next queued turn loads it.
          finish: () =>
            Effect.gen(function*() {
              yield* terminal.endLine
              const shown = yield* terminal.sink.delivered
              yield* Ref.update(history, (items) => [
                ...items,
                user,
                ...(shown.trim().length === 0 ? [] : [{ role: "assistant" as const, content: shown.trim() }])
              ])
            })
        })
      )
      // `message`: a line folded into a later one's turn (queue full) still reaches its context.
      const models = yield* Ref.get(chosenModels)
      const ticket = yield* queue.submit({
        ...baseInput(options.persona, Effect.map(Ref.get(history), (items) => [...items, user]), openSink),
        message: user,
        ...(models === undefined ? {} : { models })
      })
      yield* Ref.update(pending, (n) => n + 1)
      const settle = ticket.result.pipe(
        Effect.catch((error) => Effect.succeed(failedTurn(error))),
        Effect.flatMap((result) =>
          Effect.gen(function*() {
            if (result.status === "stopped_by_user") yield* status("⏹ stopped")
            const left = yield* Ref.updateAndGet(pending, (n) => n - 1)
            if (left === 0) yield* prompt
          })
        )
      )
      // Piped lines still go one by one: the next line waits for this reply (see the loop).
      yield* FiberSet.run(watchers, settle)
    })

  yield* status(`loopcord terminal chat as ${options.persona.name}. Ctrl-C stops a reply; Ctrl-C again (or /exit) quits.`)
  yield* prompt

  while (true) {
    const event = yield* Queue.take(events)
    if (event._tag === "Closed") {
      // End of input: let the replies already asked for finish, then leave.
      yield* FiberSet.awaitEmpty(watchers)
      return 0
    }
    if (event._tag === "Interrupt") {
      const now = yield* Clock.currentTimeMillis
      const previous = yield* Ref.getAndSet(lastInterrupt, now)
      const busy = yield* queue.status(TERMINAL_CHANNEL)
      if ((!busy.active && busy.queued === 0) || now - previous < DOUBLE_INTERRUPT_WINDOW_MS) return 130
      yield* queue.kill(TERMINAL_CHANNEL, { requesterId: TERMINAL_USER })
      continue
    }
    const text = event.text.trim()
    // A line typed while a tool waits for approval is the answer (Enter alone: no).
    if (yield* approvals.answerLine(text)) continue
    if (!typing) {
      // Piped lines are answered one by one; one that arrives while a question waits answers it.
      yield* Effect.raceFirst(FiberSet.awaitEmpty(watchers), approvals.questionWaiting)
      if (yield* approvals.answerLine(text)) continue
    }
    if (text.length === 0) {
      if ((yield* Ref.get(pending)) === 0) yield* prompt
      continue
    }
    if (text === "/exit" || text === "/quit") return 0
    if (text === "/attach" || text.startsWith("/attach ")) {
      const path = text.slice("/attach".length).trim()
      if (path === "") {
        yield* status("usage: /attach FILE (an image for your next message)")
      } else if ((yield* Ref.get(attachments)).length >= MAX_PENDING_ATTACHMENTS) {
        yield* status(`at most ${MAX_PENDING_ATTACHMENTS} images per message`)
      } else {
        yield* attachImageFile(library, path, vision.maxImageBytes).pipe(
          Effect.tap((file) => Ref.update(attachments, (all) => [...all, file.image])),
          Effect.matchEffect({
            onFailure: (error) => status(`✗ ${error.message}`),
            onSuccess: (file) => status(`📎 ${path} attached as ${file.id}; it goes with your next message`)
          })
        )
      }
      if ((yield* Ref.get(pending)) === 0) yield* prompt
      continue
    }
    if (text === "/approvals" || text.startsWith("/approvals ")) {
      yield* status(yield* approvals.command(text.slice("/approvals".length)))
      if ((yield* Ref.get(pending)) === 0) yield* prompt
      continue
    }
    if (text === "/model" || text.startsWith("/model ")) {
      const change = terminalModelCommand(choices, yield* Ref.get(chosenModels), text.slice("/model".length))
      yield* Ref.set(chosenModels, change.chain)
      yield* status(change.line)
      if ((yield* Ref.get(pending)) === 0) yield* prompt
      continue
    }
    if (text === "/kill") {
      const killed = yield* queue.kill(TERMINAL_CHANNEL, { requesterId: TERMINAL_USER })
      if (!killed.killed && killed.cancelled === 0) yield* status("nothing to stop")
      continue
    }
    yield* submit(text)
  }
})
