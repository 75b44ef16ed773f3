import type { APIEmbed } from "discord.js"
import { DISCORD_MESSAGE_LIMIT, fenceStateAt, nextChunk, type OpenFence } from "./messageSplitter"
import type { OutgoingMessage } from "./ReplyTarget"

/**
 * Which Discord messages a streaming reply consists of (pure). Text of the current pass is laid
 * out with the splitter: every message but the last is sealed (final), the last one is live and
 * grows. A notice embed seals the live message; the next text starts a new one below it.
 */

/** One Discord message of the reply: what it should show, and what Discord has now. */
export interface Slot {
  readonly desired: OutgoingMessage
  /** Undefined until posted. */
  readonly messageId: string | undefined
  /** The text Discord shows (last sent); undefined until posted. */
  readonly shown: string | undefined
  /** When the message was last sent or edited (Clock millis). */
  readonly lastWriteAt: number
}

interface LiveMessage {
  readonly slot: number
  /** Where its body starts in the pass text, and the fence open there. */
  readonly start: number
  readonly fence: OpenFence | undefined
}

export interface ReplyLayout {
  readonly slots: ReadonlyArray<Slot>
  /** Committed text of the current pass. */
  readonly passText: string
  readonly live: LiveMessage | undefined
  /** Where the next message starts when there is no live one. */
  readonly nextStart: number
  readonly nextFence: OpenFence | undefined
  readonly limit: number
}

export const emptyLayout = (limit = DISCORD_MESSAGE_LIMIT): ReplyLayout => ({
  slots: [],
  passText: "",
  live: undefined,
  nextStart: 0,
  nextFence: undefined,
  limit
})

/** Discord trims message text and refuses an empty message. */
const isBlank = (slot: Slot): boolean => slot.desired._tag === "Text" && slot.desired.content.trim().length === 0

const textOf = (message: OutgoingMessage): string | undefined => (message._tag === "Text" ? message.content : undefined)

const replaceSlot = (slots: ReadonlyArray<Slot>, index: number, slot: Slot): ReadonlyArray<Slot> =>
  slots.map((existing, i) => (i === index ? slot : existing))

/** Lays out `passText` (which extends the layout's committed text) into sealed and live messages. */
export const layoutText = (layout: ReplyLayout, passText: string): ReplyLayout => {
  let slots = layout.slots
  let start = layout.live?.start ?? layout.nextStart
  let fence = layout.live?.fence ?? layout.nextFence
  let slotIndex = layout.live?.slot
  while (start < passText.length) {
    const chunk = nextChunk(passText, start, fence, layout.limit)
    const desired: OutgoingMessage = { _tag: "Text", content: chunk.content }
    if (slotIndex === undefined) {
      slots = [...slots, { desired, messageId: undefined, shown: undefined, lastWriteAt: 0 }]
      slotIndex = slots.length - 1
    } else {
      const existing = slots[slotIndex]
      if (existing !== undefined) slots = replaceSlot(slots, slotIndex, { ...existing, desired })
    }
    if (chunk.end === passText.length) {
      return { ...layout, slots, passText, live: { slot: slotIndex, start, fence } }
    }
    start = chunk.end
    fence = chunk.fenceAfter
    slotIndex = undefined
  }
  return { ...layout, slots, passText, live: undefined, nextStart: start, nextFence: fence }
}

/** Ends the live message: later text starts a new message (reopening an open fence). */
export const sealLive = (layout: ReplyLayout): ReplyLayout =>
  layout.live === undefined
    ? layout
    : {
      ...layout,
      live: undefined,
      nextStart: layout.passText.length,
      nextFence: fenceStateAt(layout.passText, layout.live.start, layout.passText.length, layout.live.fence)
    }

/** A notice below everything so far. */
export const addEmbed = (layout: ReplyLayout, embed: APIEmbed): ReplyLayout => {
  const sealed = sealLive(layout)
  return { ...sealed, slots: [...sealed.slots, { desired: { _tag: "Embed", embed }, messageId: undefined, shown: undefined, lastWriteAt: 0 }] }
}

/** The next pass writes new messages. */
export const newPass = (layout: ReplyLayout): ReplyLayout => ({ ...layout, passText: "", live: undefined, nextStart: 0, nextFence: undefined })

/**
 * Appends `suffix` to the last text message of the reply when it fits, else adds it as a
 * message of its own. Nothing happens when no text was posted.
 */
export const appendToLastText = (layout: ReplyLayout, suffix: string): ReplyLayout => {
  const sealed = sealLive(layout)
  const index = sealed.slots.findLastIndex((slot) => slot.desired._tag === "Text")
  const slot = sealed.slots[index]
  if (slot === undefined || slot.desired._tag !== "Text") return sealed
  if (slot.desired.content.endsWith(suffix)) return sealed
  const content = `${slot.desired.content}${suffix}`
  if (content.length <= sealed.limit) {
    return { ...sealed, slots: replaceSlot(sealed.slots, index, { ...slot, desired: { _tag: "Text", content } }) }
  }
  return { ...sealed, slots: [...sealed.slots, { desired: { _tag: "Text", content: suffix.trim() }, messageId: undefined, shown: undefined, lastWriteAt: 0 }] }
}

/** What the delivery worker should do next. */
export type DeliveryStep =
  | { readonly _tag: "Send"; readonly index: number }
  | { readonly _tag: "Edit"; readonly index: number }
  | { readonly _tag: "Wait"; readonly until: number }
  | { readonly _tag: "Idle" }

/**
 * The next request: post the first unposted message (messages appear in order), else edit a
 * message whose text changed once `minEditIntervalMs` passed since its last write (the latest
 * text wins; intermediate states are never sent), else wait for the earliest such moment.
 */
export const planNext = (slots: ReadonlyArray<Slot>, now: number, minEditIntervalMs: number): DeliveryStep => {
  const unposted = slots.findIndex((slot) => slot.messageId === undefined && !isBlank(slot))
  if (unposted !== -1) return { _tag: "Send", index: unposted }
  let earliest: number | undefined
  for (const [index, slot] of slots.entries()) {
    const text = textOf(slot.desired)
    if (slot.messageId === undefined || text === undefined || text === slot.shown) continue
    const due = slot.lastWriteAt + minEditIntervalMs
    if (due <= now) return { _tag: "Edit", index }
    earliest = earliest === undefined ? due : Math.min(earliest, due)
  }
  return earliest === undefined ? { _tag: "Idle" } : { _tag: "Wait", until: earliest }
}

/** A send or edit of message `index` went through: it now shows `shown` under `messageId`. */
export const recordWrite = (layout: ReplyLayout, index: number, write: { readonly messageId: string; readonly shown: string | undefined; readonly at: number }): ReplyLayout => {
  const slot = layout.slots[index]
  return slot === undefined
    ? layout
    : { ...layout, slots: replaceSlot(layout.slots, index, { ...slot, messageId: write.messageId, shown: write.shown, lastWriteAt: write.at }) }
}

/** Every message posted and showing its latest text (whitespace alone is never posted: Discord refuses it). */
export const isSettled = (slots: ReadonlyArray<Slot>): boolean =>
  slots.every((slot) =>
    slot.messageId === undefined ? isBlank(slot) : slot.desired._tag === "Embed" || slot.desired.content === slot.shown
  )
