import { Context, Deferred, Duration, Effect, Layer, Option, Ref, Stream, SubscriptionRef } from "effect"
import { ServerSettingsConfig } from "../config/ServerSettingsConfig"
import {
  type ApprovalAnswer,
  type ApprovalPrompt,
  type ApprovalRequest,
  matchesApprovalRules,
  ToolApprovals,
  type ToolApprovalsShape
} from "../tools/ToolApprovals"
import { dim } from "./render"
import { TerminalOutput } from "./TerminalOutput"

/** Rules the chat may hold (`/approvals add`), and questions waiting at once (parallel calls). */
const MAX_RULES = 100
const MAX_WAITING = 16
const ARGS_SHOWN = 300

interface Rule {
  readonly kind: "tool" | "mcp_server"
  readonly name: string
}

interface Waiting {
  readonly id: number
  readonly answered: Deferred.Deferred<ApprovalAnswer>
}

const ruleOf = (raw: string): Rule | undefined => {
  const name = raw.trim()
  const server = /^mcp:([A-Za-z0-9_-]{1,32})$/.exec(name)?.[1]
  if (server !== undefined) return { kind: "mcp_server", name: server }
  return /^[A-Za-z0-9_-]{1,64}$/.test(name) ? { kind: "tool", name } : undefined
}

const ruleText = (rule: Rule) => (rule.kind === "tool" ? rule.name : `mcp:${rule.name}`)

/**
 * Tool approvals in the terminal chat: `/approvals add NAME` (a tool, or `mcp:SERVER` for every
 * tool of one MCP server) marks calls that wait; such a call asks `[y/N]` and the next line
 * typed is the answer (anything but y/yes denies). Kept for the session.
 */
export class TerminalApprovals extends Context.Service<TerminalApprovals>()("loopcord/terminal/TerminalApprovals", {
  make: Effect.gen(function*() {
    const out = yield* TerminalOutput
    const { toolApprovalTimeout: timeout } = yield* ServerSettingsConfig
    const rules = yield* Ref.make<ReadonlyArray<Rule>>([])
    // Oldest first: the next answer typed goes to the question asked first.
    const waiting = yield* SubscriptionRef.make<ReadonlyArray<Waiting>>([])
    const counter = yield* Ref.make(0)

    const say = (line: string) => out.stdout(`${dim(line, out.colour)}\n`)

    const ask = (request: ApprovalRequest): Effect.Effect<Option.Option<ApprovalPrompt>> =>
      Effect.gen(function*() {
        const answered = yield* Deferred.make<ApprovalAnswer>()
        const id = yield* Ref.updateAndGet(counter, (n) => n + 1)
        const added = yield* SubscriptionRef.modify(waiting, (all): [boolean, ReadonlyArray<Waiting>] =>
          all.length >= MAX_WAITING ? [false, all] : [true, [...all, { id, answered }]])
        if (!added) return Option.none()
        const args = JSON.stringify(request.args) ?? "{}"
        yield* out.stdout(`\n🔐 run ${request.toolName} ${args.length > ARGS_SHOWN ? `${args.slice(0, ARGS_SHOWN - 1)}…` : args}? ` +
          `[y/N] (${Math.round(Duration.toSeconds(timeout))} s) `)
        return Option.some({
          answer: Effect.map(Deferred.await(answered), (answer) => ({ answer, by: undefined })),
          close: (outcome) =>
            Effect.andThen(
              SubscriptionRef.update(waiting, (all) => all.filter((entry) => entry.id !== id)),
              outcome === "approved" ? Effect.void : say(outcome === "denied" ? `⛔ ${request.toolName} not run` : outcome === "timed_out" ? `⌛ no answer: ${request.toolName} not run` : `⏹ ${request.toolName} not run`)
            )
        })
      })

    const approvals: ToolApprovalsShape = {
      timeout,
      required: (request) => Effect.map(Ref.get(rules), (all) => matchesApprovalRules(all, request)),
      ask
    }

    /** A line typed while a question waits is its answer (true: the line was taken as one). */
    const answerLine = (line: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        // Taken off the list as it is answered: the next line is not an answer to it too.
        const oldest = yield* SubscriptionRef.modify(waiting, (all): [Waiting | undefined, ReadonlyArray<Waiting>] => [all[0], all.slice(1)])
        if (oldest === undefined) return false
        yield* Deferred.succeed(oldest.answered, /^\s*y(es)?\s*$/i.test(line) ? "approved" : "denied")
        return true
      })

    /** Completes once a question waits (at once when one does). */
    const questionWaiting: Effect.Effect<void> = SubscriptionRef.changes(waiting).pipe(
      Stream.filter((all) => all.length > 0),
      Stream.runHead,
      Effect.asVoid
    )

    /** `/approvals`, `/approvals add NAME`, `/approvals remove NAME`: the line to show. */
    const command = (argument: string): Effect.Effect<string> =>
      Effect.gen(function*() {
        const [verb = "", ...rest] = argument.trim().split(/\s+/)
        if (verb === "") {
          const all = yield* Ref.get(rules)
          return all.length === 0 ? "no tool waits for approval. /approvals add NAME (or mcp:SERVER)" : `waits for approval: ${all.map(ruleText).join(", ")}`
        }
        const rule = ruleOf(rest.join(" "))
        if ((verb !== "add" && verb !== "remove") || rule === undefined) return "usage: /approvals [add|remove NAME] (NAME: a tool, or mcp:SERVER)"
        const same = (other: Rule) => other.kind === rule.kind && other.name.toLowerCase() === rule.name.toLowerCase()
        if (verb === "remove") {
          const removed = yield* Ref.modify(rules, (all): [boolean, ReadonlyArray<Rule>] => [all.some(same), all.filter((other) => !same(other))])
          return removed ? `${ruleText(rule)} runs without approval again` : `${ruleText(rule)} was not waiting for approval`
        }
        const added = yield* Ref.modify(rules, (all): [string, ReadonlyArray<Rule>] =>
          all.some(same) ? ["already", all] : all.length >= MAX_RULES ? ["full", all] : ["added", [...all, rule]])
        return added === "added" ? `${ruleText(rule)} now asks before it runs` : added === "full" ? `at most ${MAX_RULES} approval rules` : `${ruleText(rule)} already asks`
      })

    return { approvals, answerLine, questionWaiting, command } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)

  /** The service and, for every turn, the ToolApprovals it answers. */
  static readonly live = Layer.effect(ToolApprovals, Effect.map(TerminalApprovals, (terminal) => terminal.approvals)).pipe(
    Layer.provideMerge(TerminalApprovals.Default)
  )
}
