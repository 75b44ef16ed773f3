import type { ChatMessage } from "../../../domain/ChatMessage"
import type { PersonaUserBlock } from "../../../store/PersonaBlockStore"

const HOUR_MS = 3_600_000

const isActive = (block: PersonaUserBlock, now: number): boolean => now < block.expiresAt

/** Whole hours left, rounded up and never below 1 ("1 more hour" minutes before expiry). */
const hoursRemaining = (block: PersonaUserBlock, now: number): number =>
  Math.max(1, Math.ceil((block.expiresAt - now) / HOUR_MS))

/**
 * The LLM-facing notice that stands in for a blocked user's messages (English on
 * purpose, like other system injections).
 */
export const blockedUserNotice = (name: string, block: PersonaUserBlock, now: number): string => {
  const hours = hoursRemaining(block, now)
  return (
    `[System: ${name} sent a message but is currently blocked by you for ${hours} more ${hours === 1 ? "hour" : "hours"}. ` +
    "Use `unblock_user` to unblock if needed]"
  )
}

/**
 * Whether `userId` may trigger the persona: an active block of either kind, `mute` or `block`, makes the
 * persona ignore their messages as triggers. The Discord front calls this before queuing a turn.
 */
export const mayTrigger = (blocks: ReadonlyArray<PersonaUserBlock>, userId: string, now: number): boolean =>
  !blocks.some((block) => block.userId === userId && isActive(block, now))

/** Front id of the user who wrote a message (`undefined` for the persona's own and system items). */
type AuthorOf = (message: ChatMessage) => string | undefined

const activeBlockOf = (blocks: ReadonlyArray<PersonaUserBlock>, now: number, authorOf: AuthorOf) => {
  const blocking = new Map(blocks.filter((block) => block.mode === "block" && isActive(block, now)).map((block) => [block.userId, block]))
  return (message: ChatMessage): PersonaUserBlock | undefined => {
    if (message.role !== "user") return undefined
    const author = authorOf(message)
    return author === undefined ? undefined : blocking.get(author)
  }
}

/**
 * Context building under persona blocks (docs/architecture.md, Persona blocks): each run of
 * consecutive messages from a `block`ed user (their text and direct media) becomes one system
 * notice. `mute` leaves the context alone; other users' messages are never touched.
 */
export const applyBlockedUserNotices = (
  messages: ReadonlyArray<ChatMessage>,
  blocks: ReadonlyArray<PersonaUserBlock>,
  options: { readonly now: number; readonly authorOf: AuthorOf }
): ReadonlyArray<ChatMessage> => {
  const blockOf = activeBlockOf(blocks, options.now, options.authorOf)
  const result: Array<ChatMessage> = []
  let previousBlocked: string | undefined
  for (const message of messages) {
    const block = blockOf(message)
    if (block === undefined) {
      previousBlocked = undefined
      result.push(message)
      continue
    }
    if (previousBlocked === block.userId) continue
    previousBlocked = block.userId
    result.push({ role: "system", content: blockedUserNotice(message.name ?? block.userName, block, options.now) })
  }
  return result
}

/**
 * Front message ids whose content the notices replaced: the front must not quote them in reply
 * annotations of other messages either.
 */
export const blockedMessageIds = (
  messages: ReadonlyArray<ChatMessage>,
  blocks: ReadonlyArray<PersonaUserBlock>,
  options: { readonly now: number; readonly authorOf: AuthorOf }
): ReadonlySet<string> => {
  const blockOf = activeBlockOf(blocks, options.now, options.authorOf)
  return new Set(
    messages.flatMap((message) => (message.messageId !== undefined && blockOf(message) !== undefined ? [message.messageId] : []))
  )
}
