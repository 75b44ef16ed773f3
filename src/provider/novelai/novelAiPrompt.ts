import type { ChatMessage } from "../../domain/ChatMessage"
import type { GenerationRequest } from "../GenerationRequest"
import { exchangesOf, toolResultText } from "../toolReplay"

/**
 * The flat text prompt NovelAI's text models continue: the system prompt, a `***` separator,
 * the conversation as `Name: message` lines, and the bot's own label last so the model writes
 * the bot's turn. Tool results an earlier attempt obtained are told as bracketed notes (NovelAI
 * is not offered tools). A prompt over `maxChars` loses its oldest lines first, then the start
 * of the system prompt, so the end (what the model continues) is always kept.
 */

interface PromptOptions {
  /** The bot's speaker label (`BOT_PERSONA_NAME`). */
  readonly botName: string
  readonly maxChars: number
}

/** Label of a user line without a name. */
const DEFAULT_USER_LABEL = "User"

const oneLine = (text: string) => text.replace(/\r\n?/g, "\n").trim()

const messageLine = (message: ChatMessage, botName: string): string | undefined => {
  const content = oneLine(message.content)
  const images = (message.images ?? []).length
  const text = images === 0 ? content : `${content}${content.length > 0 ? " " : ""}[${images === 1 ? "an image" : `${images} images`}]`
  if (text.length === 0) return undefined
  switch (message.role) {
    case "system":
      return text
    case "assistant":
      return `${botName}: ${text}`
    case "user":
      return `${message.name !== undefined && message.name.trim().length > 0 ? message.name.trim() : DEFAULT_USER_LABEL}: ${text}`
  }
}

/** Every speaker label the prompt uses: the reply ends where the model starts one of them. */
export const speakersOf = (request: GenerationRequest, botName: string): ReadonlyArray<string> => [
  botName,
  DEFAULT_USER_LABEL,
  ...request.messages.flatMap((message) => (message.role === "user" && message.name !== undefined ? [message.name] : []))
]

export const novelAiPrompt = (request: GenerationRequest, options: PromptOptions): string => {
  const lines: Array<string> = []
  for (const message of request.messages) {
    const line = messageLine(message, options.botName)
    if (line !== undefined) lines.push(line)
  }
  // The calls one pass made: its pre-tool text once, then a note per result, in order.
  for (const exchange of exchangesOf(request.functionHistory)) {
    if (exchange.preToolText !== undefined) lines.push(`${options.botName}: ${oneLine(exchange.preToolText)}`)
    for (const entry of exchange.entries) lines.push(`[Result of ${entry.functionCall.name}: ${oneLine(toolResultText(entry))}]`)
  }
  const prefill = request.assistantPrefill?.trimStart() ?? ""
  const tail = `${options.botName}:${prefill.length > 0 ? ` ${prefill}` : ""}`
  const system = oneLine(request.system)
  const head = system.length > 0 ? `${system}\n***\n` : ""

  // Oldest lines go first when the prompt is too long.
  let kept = lines
  const size = (body: ReadonlyArray<string>) => head.length + body.reduce((total, line) => total + line.length + 1, 0) + tail.length
  while (kept.length > 0 && size(kept) > options.maxChars) kept = kept.slice(1)
  const prompt = `${head}${kept.map((line) => `${line}\n`).join("")}${tail}`
  return prompt.length > options.maxChars ? prompt.slice(prompt.length - options.maxChars) : prompt
}
