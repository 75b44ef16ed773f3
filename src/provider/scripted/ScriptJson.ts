import { Result, Schema, SchemaIssue } from "effect"
import type { ChatMessage } from "../../domain/ChatMessage"
import * as S from "./Script"

/**
 * The JSON form of a script, as `LLM_SCRIPT` supplies it (inline JSON or a path to a file):
 *
 * ```json
 * { "passes": [
 *     [{ "text": "Let me check. " }, { "toolCall": { "name": "web_search", "args": { "query": "x" } } }],
 *     "It is sunny.",
 *     [{ "sleepMs": 2000 }, { "error": { "reason": "RateLimit", "status": 429 } }]
 *   ],
 *   "then": "echo" }
 * ```
 * A pass is a list of steps or a string (shorthand for one text reply). A bare array is the
 * `passes` list. After the last pass: `fail` (default) fails every further call, `echo` answers
 * with the built-in echo reply, `repeat` replays the last pass forever.
 */
const Reason = Schema.Literals(["Auth", "RateLimit", "Server", "Network", "BadRequest", "InvalidResponse", "Stalled", "ContextOverflow"])

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const Step = Schema.Union([
  Schema.Struct({ text: Schema.String }),
  Schema.Struct({ reasoning: Schema.String }),
  Schema.Struct({
    toolCall: Schema.Struct({
      name: Schema.String,
      args: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
      id: Schema.optional(Schema.String)
    })
  }),
  Schema.Struct({ usage: Schema.Struct({ inputTokens: NonNegativeInt, outputTokens: NonNegativeInt }) }),
  Schema.Struct({ finish: Schema.Literals(["stop", "length", "tool_calls", "content_filter", "other"]) }),
  Schema.Struct({ keepAlive: Schema.Literal(true) }),
  Schema.Struct({ sleepMs: NonNegativeInt }),
  Schema.Struct({ error: Schema.Struct({ reason: Reason, detail: Schema.optional(Schema.String), status: Schema.optional(Schema.Int) }) }),
  Schema.Struct({ hang: Schema.Literal(true) })
])
type Step = typeof Step.Type

const Pass = Schema.Union([Schema.String, Schema.Array(Step)])
type Pass = typeof Pass.Type

const Then = Schema.Literals(["fail", "echo", "repeat"])
type Then = typeof Then.Type

const ScriptDocument = Schema.Union([
  Schema.Array(Pass),
  Schema.Struct({ passes: Schema.Array(Pass), then: Schema.optional(Then) })
])

const decodeDocument = Schema.decodeUnknownResult(Schema.fromJsonString(ScriptDocument), { onExcessProperty: "error" })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** What every shape of step a key does not belong to says about it: not the telling issue when another says more. */
const excessKey = "Expected no excess property"

/** A path segment as the standard failure gives it: a key, or an object holding one. */
const segmentName = (segment: PropertyKey | { readonly key: PropertyKey }): string =>
  String(typeof segment === "object" ? segment.key : segment)

const toStep = (step: Step): S.ScriptStep => {
  if ("text" in step) return S.text(step.text)
  if ("reasoning" in step) return S.reasoning(step.reasoning)
  if ("toolCall" in step) {
    return S.toolCall(step.toolCall.name, step.toolCall.args, step.toolCall.id === undefined ? {} : { id: step.toolCall.id })
  }
  if ("usage" in step) return S.usage(step.usage.inputTokens, step.usage.outputTokens)
  if ("finish" in step) return S.finish(step.finish)
  if ("keepAlive" in step) return S.keepAlive
  if ("sleepMs" in step) return S.sleep(step.sleepMs)
  if ("error" in step) {
    return S.fail(step.error.reason, step.error.detail, step.error.status === undefined ? {} : { status: step.error.status })
  }
  return S.hang
}

const toPass = (pass: Pass): S.ScriptedPass => (typeof pass === "string" ? S.reply(pass) : pass.map(toStep))

/** The last user message of a request: what the echo reply repeats. */
const lastUserText = (messages: ReadonlyArray<ChatMessage>): string | undefined =>
  [...messages].reverse().find((message) => message.role === "user")?.content

const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * The built-in reply of `LLM_PROVIDER=scripted` without a script: `You said: <last user text>`,
 * streamed word by word, with a usage estimate (4 characters a token) so reports carry usage.
 */
export const echoPass = (call: S.ScriptCall): S.ScriptedPass => {
  const said = lastUserText(call.request.messages)
  const answer = said === undefined ? "Hello from the scripted provider." : `You said: ${said}`
  const words = answer.split(/(?<=\s)/)
  const input = call.request.system + call.request.messages.map((message) => message.content).join("\n")
  return [
    ...words.map(S.text),
    S.usage(estimateTokens(input), estimateTokens(answer)),
    S.finish("stop")
  ]
}

export const echoScript: S.Script = echoPass

/** Parses a script document; the error is one line saying what is wrong and where. */
export const parseScript = (json: string): Result.Result<S.Script, string> =>
  Result.match(decodeDocument(json), {
    onFailure: (error) => {
      // A step matches none of its shapes: the shape the key belongs to says what is wrong with it.
      const issues = formatIssues(error.issue).issues
      const issue = issues.find((candidate) => candidate.message !== excessKey) ?? issues[0]
      const path = issue?.path ?? []
      const where = path.length === 0 ? "" : ` at ${path.map(segmentName).join(".")}`
      return Result.fail(`invalid script${where}: ${(issue?.message ?? String(error)).replace(/\s+/g, " ")}`)
    },
    onSuccess: (document) => {
      const passes = ("passes" in document ? document.passes : document).map(toPass)
      const then: Then = "passes" in document ? (document.then ?? "fail") : "fail"
      const script: S.Script = (call) => {
        const scripted = passes[call.index]
        if (scripted !== undefined) return scripted
        if (then === "echo") return echoPass(call)
        if (then === "repeat") return passes[passes.length - 1]
        return undefined
      }
      return Result.succeed(script)
    }
  })
