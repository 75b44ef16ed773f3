import { Effect, Option, Ref, Schema } from "effect"
import { ChatMessage } from "../domain/ChatMessage"
import { setFlag, type TurnState, type TurnSwitch } from "../tools/TurnState"
import { CurrentTurn } from "./CurrentTurn"
import { PendingContextStash } from "./PendingContextStash"

/** A successful result whose `data.type` starts with this enriches the context and restarts the pass. */
const CONTEXT_RESTART_PREFIX = "context_restart_"

/** How many of the most recent context items the message-metadata restart annotates. */
export const METADATA_ANNOTATED_ITEMS = 30

/** Marks an annotated item, so a second annotation pass leaves it alone. */
const METADATA_MARKER = "[metadata"

/** Appended after the annotation so the model uses it instead of asking again. */
export const METADATA_TAIL_DIRECTIVE =
  "[System: message metadata (message ids, authors, send times) is now shown at the start of the recent messages " +
  "above. Use it to answer; do not call reveal_message_metadata again this turn.]"

/** Which substring of the restart type disables which repeat. */
const FLAG_BY_TYPE_FRAGMENT: ReadonlyArray<readonly [fragment: string, flag: TurnSwitch]> = [
  ["youtube", "disableYouTubeProcessing"],
  ["image", "disableProfilePictureProcessing"],
  ["gif", "disableGifProcessing"],
  ["message_metadata", "disableMessageMetadataContext"]
]

/** A payload that already is a context item keeps its role, author and images. */
const ContextItem = Schema.Struct({
  role: Schema.Literals(["system", "user", "assistant"]),
  content: Schema.String,
  name: Schema.optionalKey(Schema.String),
  images: Schema.optionalKey(Schema.Array(Schema.Struct({ url: Schema.String, mimeType: Schema.optionalKey(Schema.String) }))),
  messageId: Schema.optionalKey(Schema.String),
  createdAt: Schema.optionalKey(Schema.String)
})
const decodeContextItem = Schema.decodeUnknownOption(ContextItem)

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The restart type of a tool result's data, when it asks for one. */
export const contextRestartType = (data: unknown): string | undefined =>
  isRecord(data) && typeof data["type"] === "string" && data["type"].startsWith(CONTEXT_RESTART_PREFIX)
    ? data["type"]
    : undefined

/**
 * Stage 03: when a successful tool result asks for a context restart, enrich the
 * turn's context items and set the flags that prevent a repeat, and return true (the loop then
 * starts the next pass without a history entry). Returns false for any other result.
 */
export const handleEnhancedContextRestart = Effect.fn("handleEnhancedContextRestart")(function*(data: unknown) {
  const type = contextRestartType(data)
  if (type === undefined || !isRecord(data)) return false
  const { state } = yield* CurrentTurn
  const withMetadata = type.includes("message_metadata")
  if (withMetadata) yield* Ref.update(state.contextItems, annotateRecentMessages)
  const payload = yield* restartPayload(data)
  if (typeof payload === "object" && payload !== null) {
    yield* Ref.update(state.contextItems, (items) => [...items, toContextItem(payload)])
  }
  if (withMetadata) {
    yield* Ref.update(state.contextItems, (items) => [...items, ChatMessage({ role: "system", content: METADATA_TAIL_DIRECTIVE })])
  }
  yield* setRestartFlags(state, type)
  yield* Effect.logInfo(`Context restart: ${type}`)
  return true
})

/** The stashed payload named by `pending_context_key` (taken once), else `enhanced_context_item`. */
const restartPayload = (data: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const key = data["pending_context_key"]
    if (typeof key !== "string") return data["enhanced_context_item"]
    const stashed = yield* (yield* PendingContextStash).take(key)
    if (Option.isSome(stashed)) return stashed.value
    yield* Effect.logWarning(`Pending context '${key}' is missing or expired; using the inline context item`)
    return data["enhanced_context_item"]
  })

/** A ChatMessage-shaped payload as is; text under `content`/`text` or else its JSON as a system item. */
const toContextItem = (payload: object): ChatMessage =>
  Option.match(decodeContextItem(payload), {
    onSome: (item) => ChatMessage(item),
    onNone: () => {
      const record: Readonly<Record<string, unknown>> = isRecord(payload) ? payload : {}
      const text = typeof record["content"] === "string"
        ? record["content"]
        : typeof record["text"] === "string"
        ? record["text"]
        : JSON.stringify(payload)
      return ChatMessage({ role: "system", content: text })
    }
  })

const setRestartFlags = (state: TurnState, type: string) =>
  Effect.forEach(
    FLAG_BY_TYPE_FRAGMENT.filter(([fragment]) => type.includes(fragment)),
    ([, flag]) => setFlag(state, flag),
    { discard: true }
  )

/** Prefixes the recent dialogue items with their id, author and send time (when known). */
export const annotateRecentMessages = (items: ReadonlyArray<ChatMessage>): ReadonlyArray<ChatMessage> => {
  const firstAnnotated = Math.max(0, items.length - METADATA_ANNOTATED_ITEMS)
  return items.map((item, index) => (index < firstAnnotated ? item : annotate(item)))
}

const annotate = (item: ChatMessage): ChatMessage => {
  if (item.role === "system" || item.content.startsWith(METADATA_MARKER)) return item
  const fields = [
    item.messageId === undefined ? undefined : `message_id: ${item.messageId}`,
    item.name === undefined ? undefined : `author: ${item.name}`,
    item.createdAt === undefined ? undefined : `sent: ${item.createdAt}`
  ].filter((field): field is string => field !== undefined)
  return fields.length === 0 ? item : ChatMessage({ ...item, content: `${METADATA_MARKER} | ${fields.join(" | ")}]\n${item.content}` })
}
