import type { APIEmbed } from "discord.js"
import { DISCORD_MESSAGE_LIMIT, fenceStateAt, nextChunk, type OpenFence } from "./messageSplitter"
import type { OutgoingMessage } from "./ReplyTarget"

/**
 * Which Discord messages a streaming reply consists of (pure). Text of the current pass is laid
 * out with the splitter: every message but the last is sealed (final), the last one is live and
 * grows. A notice embed seals the live message; the next text starts a new one below it.
 *
 * Delivery failures Discord can recover from change the layout, never the text: a message that
 * is gone is posted again (`repost`), one that can no longer be edited keeps what it shows and
 * the rest of its text continues in a new message (`continueAfterFrozen`). At most
 * `maxMessages` messages carry the reply's text: beyond, the reply is cut with `CUT_MARKER`.
 */

/** Shown at the end of a reply cut at the message cap (Discord subtext). */
export const CUT_MARKER = "\n-# ✂ reply cut: it was too long for Discord"

/** The reply text a text message carries, from which its content is rendered. */
interface TextSource {
  /** Its part of the reply text. */
  readonly body: string
  /** The code fence open where `body` starts (reopened at the top of the message). */
  readonly fence: OpenFence | undefined
  /** A marker appended after the body (stopped, cut). */
  readonly suffix: string
}

/** One Discord message of the reply: what it should show, and what Discord has now. */
interface Slot {
  readonly desired: OutgoingMessage
  /** Undefined for a notice embed. */
  readonly source: TextSource | undefined
  /** Undefined until posted. */
  readonly messageId: string | undefined
  /** The text Discord shows (last sent); undefined until posted. */
  readonly shown: string | undefined
  /** How much of `source.body` Discord shows. */
  readonly shownBody: number
  /** When the message was last sent or edited (Clock millis). */
  readonly lastWriteAt: number
  /** Discord refused to edit it any more: it keeps what it shows. */
  readonly frozen: boolean
  /** Distinct per post of the reply (a repost gets a new one): the post's nonce. */
  readonly serial: number
  /** The last message the cap allows: laid out with room for the cut marker. */
  readonly reservesMarker: boolean
}

interface LiveMessage {
  readonly slot: number
  /** Where its body starts in the pass text, and the fence open there. */
  readonly start: number
  readonly fence: OpenFence | undefined
}

export interface ReplyLayout {
  readonly slots: ReadonlyArray<Slot>
  /** Committed text of the current pass (only what the layout took: nothing past a cut). */
  readonly passText: string
  readonly live: LiveMessage | undefined
  /** Where the next message starts when there is no live one. */
  readonly nextStart: number
  readonly nextFence: OpenFence | undefined
  readonly limit: number
  /** At most this many messages are laid out for the reply's text (notices and continuations aside). */
  readonly maxMessages: number
  /** Messages laid out for the reply's text so far. */
  readonly textMessages: number
  /** The reply reached `maxMessages`: later text is dropped. */
  readonly cut: boolean
  readonly nextSerial: number
}

export const emptyLayout = (limit = DISCORD_MESSAGE_LIMIT, maxMessages = Number.POSITIVE_INFINITY): ReplyLayout => ({
  slots: [],
  passText: "",
  live: undefined,
  nextStart: 0,
  nextFence: undefined,
  limit,
  maxMessages: Math.max(1, maxMessages),
  textMessages: 0,
  cut: false,
  nextSerial: 0
})

/** Discord trims message text and refuses an empty message. */
const isBlank = (slot: Slot): boolean => slot.desired._tag === "Text" && slot.desired.content.trim().length === 0

const textOf = (message: OutgoingMessage): string | undefined => (message._tag === "Text" ? message.content : undefined)

const replaceSlot = (slots: ReadonlyArray<Slot>, index: number, slot: Slot): ReadonlyArray<Slot> =>
  slots.map((existing, i) => (i === index ? slot : existing))

const newSlot = (layout: ReplyLayout, desired: OutgoingMessage, source: TextSource | undefined): Slot => ({
  desired,
  source,
  messageId: undefined,
  shown: undefined,
  shownBody: 0,
  lastWriteAt: 0,
  frozen: false,
  serial: layout.nextSerial,
  reservesMarker: false
})

const textSlot = (layout: ReplyLayout, source: TextSource, content: string): Slot => newSlot(layout, { _tag: "Text", content }, source)

/**
 * Lays out `passText` (which extends the layout's committed text) into sealed and live
 * messages. The last message the cap allows keeps room for the cut marker; text that would
 * need one more is dropped and the marker shown instead.
 */
export const layoutText = (layout: ReplyLayout, passText: string): ReplyLayout => {
  if (layout.cut) return layout
  let current = layout
  let start = layout.live?.start ?? layout.nextStart
  let fence = layout.live?.fence ?? layout.nextFence
  let slotIndex = layout.live?.slot
  while (start < passText.length) {
    if (slotIndex === undefined && current.textMessages >= current.maxMessages) return cutAt(current, passText, start)
    const reserves = slotIndex === undefined ? current.textMessages + 1 === current.maxMessages : current.slots[slotIndex]?.reservesMarker === true
    const chunk = nextChunk(passText, start, fence, reserves ? current.limit - CUT_MARKER.length : current.limit)
    const source: TextSource = { body: passText.slice(start, chunk.end), fence, suffix: "" }
    if (slotIndex === undefined) {
      const slot: Slot = { ...textSlot(current, source, chunk.content), reservesMarker: reserves }
      current = { ...current, slots: [...current.slots, slot], textMessages: current.textMessages + 1, nextSerial: current.nextSerial + 1 }
      slotIndex = current.slots.length - 1
    } else {
      const existing = current.slots[slotIndex]
      if (existing !== undefined) current = { ...current, slots: replaceSlot(current.slots, slotIndex, { ...existing, desired: { _tag: "Text", content: chunk.content }, source }) }
    }
    if (chunk.end === passText.length) {
      return { ...current, passText, live: { slot: slotIndex, start, fence } }
    }
    if (reserves) return cutAt({ ...current, live: { slot: slotIndex, start, fence } }, passText, chunk.end)
    start = chunk.end
    fence = chunk.fenceAfter
    slotIndex = undefined
  }
  return { ...current, passText, live: undefined, nextStart: start, nextFence: fence }
}

/** The reply is cut where `passText` reaches `end`: nothing after it is laid out, the marker goes below what is. */
const cutAt = (layout: ReplyLayout, passText: string, end: number): ReplyLayout =>
  ({ ...appendToLastText({ ...layout, passText: passText.slice(0, end) }, CUT_MARKER), cut: true })

/** Ends the live message: later text starts a new message (reopening an open fence). */
const sealLive = (layout: ReplyLayout): ReplyLayout =>
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
  return { ...sealed, slots: [...sealed.slots, newSlot(sealed, { _tag: "Embed", embed }, undefined)], nextSerial: sealed.nextSerial + 1 }
}

/** Notices in the reply so far. */
export const embedCount = (layout: ReplyLayout): number => layout.slots.filter((slot) => slot.desired._tag === "Embed").length

/** The next pass writes new messages. */
export const newPass = (layout: ReplyLayout): ReplyLayout => ({ ...layout, passText: "", live: undefined, nextStart: 0, nextFence: undefined })

/**
 * Appends `suffix` to the last text message of the reply when it fits (and Discord still lets
 * it be edited), else adds it as a message of its own. Nothing happens when no text was posted.
 */
export const appendToLastText = (layout: ReplyLayout, suffix: string): ReplyLayout => {
  const sealed = sealLive(layout)
  const index = sealed.slots.findLastIndex((slot) => slot.desired._tag === "Text")
  const slot = sealed.slots[index]
  if (slot === undefined || slot.desired._tag !== "Text" || slot.source === undefined) return sealed
  if (slot.desired.content.endsWith(suffix)) return sealed
  const content = `${slot.desired.content}${suffix}`
  if (content.length <= sealed.limit && !slot.frozen) {
    return { ...sealed, slots: replaceSlot(sealed.slots, index, { ...slot, desired: { _tag: "Text", content }, source: { ...slot.source, suffix: slot.source.suffix + suffix } }) }
  }
  const own = suffix.trim()
  return { ...sealed, slots: [...sealed.slots, textSlot(sealed, { body: "", fence: undefined, suffix: own }, own)], nextSerial: sealed.nextSerial + 1 }
}

/** What the delivery worker should do next. */
type DeliveryStep =
  | { readonly _tag: "Send"; readonly index: number }
  | { readonly _tag: "Edit"; readonly index: number }
  | { readonly _tag: "Wait"; readonly until: number }
  | { readonly _tag: "Idle" }

const isBehind = (slot: Slot): boolean =>
  slot.messageId !== undefined && slot.desired._tag === "Text" && slot.desired.content !== slot.shown

/**
 * The next request: post the first unposted message (messages appear in order, and each one
 * is complete before the next is posted: an earlier message behind its text is edited first,
 * so a continuation can always follow right below it), else edit a message whose text changed
 * once `minEditIntervalMs` passed since its last write (the latest text wins; intermediate
 * states are never sent), else wait for the earliest such moment.
 */
export const planNext = (slots: ReadonlyArray<Slot>, now: number, minEditIntervalMs: number): DeliveryStep => {
  const unposted = slots.findIndex((slot) => slot.messageId === undefined && !isBlank(slot))
  if (unposted !== -1) {
    const behind = slots.slice(0, unposted).findIndex(isBehind)
    return behind === -1 ? { _tag: "Send", index: unposted } : { _tag: "Edit", index: behind }
  }
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

/** What a send or edit that went through wrote. */
interface WriteRecord {
  readonly messageId: string
  /** The content sent (undefined for an embed). */
  readonly shown: string | undefined
  /** How much of the slot's body that content carries. */
  readonly shownBody: number
  readonly at: number
}

/** A send or edit of message `index` went through: it now shows `shown` under `messageId`. */
export const recordWrite = (layout: ReplyLayout, index: number, write: WriteRecord): ReplyLayout => {
  const slot = layout.slots[index]
  return slot === undefined
    ? layout
    : { ...layout, slots: replaceSlot(layout.slots, index, { ...slot, messageId: write.messageId, shown: write.shown, shownBody: write.shownBody, lastWriteAt: write.at }) }
}

/** Message `index` is gone (deleted): it is posted again, with all of its text, as a new message. */
export const repost = (layout: ReplyLayout, index: number): ReplyLayout => {
  const slot = layout.slots[index]
  if (slot === undefined) return layout
  const fresh: Slot = { ...slot, messageId: undefined, shown: undefined, shownBody: 0, lastWriteAt: 0, serial: layout.nextSerial }
  return { ...layout, slots: replaceSlot(layout.slots, index, fresh), nextSerial: layout.nextSerial + 1 }
}

/** `body` (with `fence` open where it starts) as messages of at most `limit`, in order. */
const piecesOf = (layout: ReplyLayout, body: string, fence: OpenFence | undefined): Array<{ readonly content: string; readonly source: TextSource }> => {
  const pieces: Array<{ readonly content: string; readonly source: TextSource }> = []
  for (let start = 0, open = fence; start < body.length;) {
    const chunk = nextChunk(body, start, open, layout.limit)
    pieces.push({ content: chunk.content, source: { body: body.slice(start, chunk.end), fence: open, suffix: "" } })
    start = chunk.end
    open = chunk.fenceAfter
  }
  return pieces
}

/** `layout` with `slots` inserted after `index` (the live message's index follows). */
const insertAfter = (layout: ReplyLayout, index: number, slots: ReadonlyArray<Slot>): ReplyLayout => {
  if (slots.length === 0) return layout
  const live = layout.live !== undefined && layout.live.slot > index ? { ...layout.live, slot: layout.live.slot + slots.length } : layout.live
  return { ...layout, slots: [...layout.slots.slice(0, index + 1), ...slots, ...layout.slots.slice(index + 1)], live }
}

/** New unposted text messages with consecutive serials. */
const freshTextSlots = (layout: ReplyLayout, pieces: ReadonlyArray<{ readonly content: string; readonly source: TextSource }>): ReadonlyArray<Slot> =>
  pieces.map((piece, i) => ({ ...textSlot(layout, piece.source, piece.content), serial: layout.nextSerial + i }))

/**
 * The text message after `index` starts `overlap` characters later: a sealed message that
 * Discord still shows with text that moved on to the next one keeps it, so the next one drops it.
 */
const dropLeading = (layout: ReplyLayout, index: number, overlap: number): ReplyLayout => {
  const next = layout.slots[index]
  if (next?.source === undefined || next.messageId !== undefined) return layout
  if (layout.live?.slot === index) {
    const { start, fence } = layout.live
    return layoutText({ ...layout, live: { slot: index, start: start + overlap, fence: fenceStateAt(layout.passText, start, start + overlap, fence) } }, layout.passText)
  }
  const body = next.source.body.slice(overlap)
  const [first, ...more] = piecesOf(layout, body, fenceStateAt(next.source.body, 0, overlap, next.source.fence))
  const trimmed: Slot = first === undefined
    ? { ...next, desired: { _tag: "Text", content: "" }, source: { body: "", fence: undefined, suffix: "" } }
    : { ...next, desired: { _tag: "Text", content: first.content }, source: first.source }
  const withTrimmed = { ...layout, slots: replaceSlot(layout.slots, index, trimmed) }
  return { ...insertAfter(withTrimmed, index, freshTextSlots(withTrimmed, more)), nextSerial: withTrimmed.nextSerial + more.length }
}

/**
 * Message `index` can no longer be edited: it keeps what Discord shows, and the text it does
 * not show yet continues in a new message right below it (a live message's later text flows
 * on in that one). Text after the message stays where it was laid out.
 */
export const continueAfterFrozen = (layout: ReplyLayout, index: number): ReplyLayout => {
  const slot = layout.slots[index]
  if (slot === undefined || slot.source === undefined || slot.shown === undefined) return layout
  const { body, fence, suffix } = slot.source
  const shownBody = Math.min(slot.shownBody, body.length)
  const frozen: Slot = {
    ...slot,
    frozen: true,
    desired: { _tag: "Text", content: slot.shown },
    source: { body: body.slice(0, shownBody), fence, suffix: "" }
  }
  const withFrozen = { ...layout, slots: replaceSlot(layout.slots, index, frozen) }
  const restFence = fenceStateAt(body, 0, shownBody, fence)
  if (layout.live?.slot === index) {
    // The live message's text goes on in a new one, laid out like any text; it takes the frozen
    // message's place in the count (a continuation never costs the reply its cap).
    const resumed = layoutText({ ...withFrozen, live: undefined, nextStart: layout.live.start + shownBody, nextFence: restFence, textMessages: withFrozen.textMessages - 1 }, layout.passText)
    return { ...resumed, textMessages: resumed.slots.length > withFrozen.slots.length ? resumed.textMessages : withFrozen.textMessages }
  }
  // A sealed message: its rest (and its marker) in as many messages as it needs, inserted below it.
  const pieces = piecesOf(layout, body.slice(shownBody), restFence)
  const own = suffix.trim()
  const lastPiece = pieces.at(-1)
  if (own.length > 0) {
    if (lastPiece !== undefined && lastPiece.content.length + suffix.length <= layout.limit) {
      pieces[pieces.length - 1] = { content: `${lastPiece.content}${suffix}`, source: { ...lastPiece.source, suffix } }
    } else {
      pieces.push({ content: own, source: { body: "", fence: undefined, suffix: own } })
    }
  }
  const continued = { ...insertAfter(withFrozen, index, freshTextSlots(withFrozen, pieces)), nextSerial: withFrozen.nextSerial + pieces.length }
  // Shown text that has moved on to the next message since (the message was sealed after it was last written).
  const overlap = slot.shownBody - body.length
  return overlap > 0 ? dropLeading(continued, index + 1 + pieces.length, overlap) : continued
}

/** Every message posted and showing its latest text (whitespace alone is never posted: Discord refuses it). */
export const isSettled = (slots: ReadonlyArray<Slot>): boolean =>
  slots.every((slot) =>
    slot.messageId === undefined ? isBlank(slot) : slot.desired._tag === "Embed" || slot.desired.content === slot.shown
  )
