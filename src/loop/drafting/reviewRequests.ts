import type { Redacted } from "effect"
import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolArgs } from "../../domain/FunctionCall"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../../provider/GenerationRequest"
import { capText, redactCredentials, safeJson } from "../../tools/toolFailureDetails"
import { VERDICT_PROTOCOL } from "./ReviewVerdict"

/**
 * What the reviewer is shown. Everything in it came from outside (users, tools, the author
 * model), so every piece is bounded: the reviewer's request stays small whatever the turn grew.
 */
const REVIEW_CONVERSATION_MESSAGES = 12
const REVIEW_MESSAGE_MAX_CHARS = 1_500
const REVIEW_TOOL_RESULTS = 8
const REVIEW_TOOL_RESULT_MAX_CHARS = 1_500
const REVIEW_INSTRUCTIONS_MAX_CHARS = 4_000
const REVIEW_ARGS_MAX_CHARS = 4_000

const RESPONSE_REVIEWER_SYSTEM =
  "You review a draft reply before it is posted to a chat, on behalf of the people in it. You never write the reply yourself. " +
  "Approve a draft that answers the latest message, agrees with the tool results and the author's instructions, and is fit to post. " +
  "Ask for a revision when it has concrete, fixable problems (a wrong claim, a missed question, a misreported tool result), and say exactly what to fix. " +
  "Cancel only when nothing at all should be posted. " + VERDICT_PROTOCOL

const TOOL_REVIEWER_SYSTEM =
  "You review a tool request before it runs, on behalf of the people in the chat. You never run tools yourself. " +
  "Approve a request that serves the latest message with sensible arguments. Answer revise, with your findings, when it should not run as it is " +
  "(the wrong tool, wrong or risky arguments, an action nobody asked for); the author may then correct it. Cancel refuses it with no correction. " +
  VERDICT_PROTOCOL

const conversation = (messages: ReadonlyArray<ChatMessage>): string =>
  messages
    .slice(-REVIEW_CONVERSATION_MESSAGES)
    .map((message) => `[${message.name ?? message.role}] ${capText(message.content, REVIEW_MESSAGE_MAX_CHARS)}`)
    .join("\n")

const toolResults = (history: ReadonlyArray<ToolHistoryEntry>): string =>
  history
    .slice(-REVIEW_TOOL_RESULTS)
    .map((entry) =>
      `- ${entry.functionCall.name} ${capText(safeJson(redactCredentials(entry.functionCall.args ?? {})), REVIEW_ARGS_MAX_CHARS)} → ` +
      capText(safeJson(entry.functionResponse.response.result), REVIEW_TOOL_RESULT_MAX_CHARS)
    )
    .join("\n")

const section = (tag: string, body: string, attributes = ""): string =>
  body.trim().length === 0 ? "" : `<${tag}${attributes}>\n${body}\n</${tag}>\n`

interface ReviewRoute {
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
}

const request = (route: ReviewRoute, system: string, packet: string): GenerationRequest => ({
  model: route.model,
  apiKey: route.apiKey,
  system,
  messages: [{ role: "user", content: packet }],
  tools: [],
  functionHistory: []
})

/** The final-response review: the conversation, the tool outcomes, the whole pending reply. */
export const responseReviewRequest = (route: ReviewRoute, input: {
  readonly instructions: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly draft: string
  /** The draft hit the held-prose ceiling: the kept text is delivered as cut. */
  readonly cut: boolean
}): GenerationRequest =>
  request(
    route,
    RESPONSE_REVIEWER_SYSTEM,
    section("author_instructions", capText(input.instructions, REVIEW_INSTRUCTIONS_MAX_CHARS)) +
      section("conversation", conversation(input.messages)) +
      section("tool_results", toolResults(input.functionHistory)) +
      // The draft is bounded by the held-prose ceiling already.
      section("draft", input.draft, input.cut ? ' status="pending_cut_at_length_limit" note="the kept text will be delivered as cut"' : ' status="complete"')
  )

/** The tool checkpoint: the conversation, what the author wrote so far, the request itself. */
export const toolReviewRequest = (route: ReviewRoute, input: {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly narration: string
  readonly name: string
  readonly description: string | undefined
  readonly args: ToolArgs
}): GenerationRequest =>
  request(
    route,
    TOOL_REVIEWER_SYSTEM,
    section("conversation", conversation(input.messages)) +
      section("author_text_so_far", capText(input.narration, REVIEW_MESSAGE_MAX_CHARS * 2)) +
      section("tool_description", capText(input.description ?? "", REVIEW_MESSAGE_MAX_CHARS)) +
      section("tool_request", capText(safeJson(redactCredentials(input.args)), REVIEW_ARGS_MAX_CHARS), ` name="${input.name.replace(/"/g, "'")}"`)
  )
