import { Effect, Layer, type Stream } from "effect"
import type { ProviderError } from "../domain/ProviderError"
import { ProviderEvent } from "../domain/ProviderEvent"
import { makeUsage } from "../domain/TokenUsage"
import { decodeWith } from "./decodeWith"
import { LanguageModel } from "./LanguageModel"

/**
 * Reasoning some models write into the text itself (`<think>…</think>` from DeepSeek-R1, Qwen3,
 * Ollama's reasoning models; `<thinking>…</thinking>` from others) becomes reasoning events as
 * it streams: text at the start of the answer is held only while it may still be an opening
 * tag, so a tag split across chunks never reaches the reply, not even for one edit.
 */

const OPENERS = ["<think>", "<thinking>"] as const
const CLOSERS = ["</think>", "</thinking>"] as const
/** The longest closer: at most this much reasoning is held back while a closer may be arriving. */
const LONGEST_CLOSER = Math.max(...CLOSERS.map((tag) => tag.length))
/** Whitespace before an opening tag is held at most this long; past it the answer is plain text. */
const MAX_LEADING_WHITESPACE = 256
/** Vendors that count no reasoning tokens: reasoning text is estimated at this many characters per token. */
const CHARS_PER_TOKEN = 4

type Phase =
  /** Nothing visible yet: the answer may still open with a tag. */
  | "start"
  /** Inside the reasoning block. */
  | "inside"
  /** Right after the closing tag: whitespace before the answer is dropped. */
  | "after"
  | "text"

const isPrefixOfOpener = (lower: string) => OPENERS.some((tag) => tag.startsWith(lower))

/** The length of the longest end of `text` that may be the start of a closing tag. */
const partialCloserLength = (lower: string): number => {
  for (let length = Math.min(LONGEST_CLOSER - 1, lower.length); length > 0; length--) {
    const end = lower.slice(lower.length - length)
    if (CLOSERS.some((tag) => tag.startsWith(end))) return length
  }
  return 0
}

/** The first closing tag in `lower`: where it starts and how long it is. */
const findCloser = (lower: string): { readonly at: number; readonly length: number } | undefined => {
  let found: { readonly at: number; readonly length: number } | undefined
  for (const tag of CLOSERS) {
    const at = lower.indexOf(tag)
    if (at !== -1 && (found === undefined || at < found.at)) found = { at, length: tag.length }
  }
  return found
}

/** Reasoning tokens a usage does not count, estimated from the reasoning characters taken out of the text. */
const withEstimatedReasoning = (event: Extract<ProviderEvent, { readonly _tag: "Usage" }>, reasoningChars: number): ProviderEvent => {
  if (reasoningChars === 0 || event.usage.reasoningTokens !== undefined) return event
  const estimate = Math.min(event.usage.outputTokens, Math.ceil(reasoningChars / CHARS_PER_TOKEN))
  return ProviderEvent.Usage({ usage: makeUsage({ ...event.usage, reasoningTokens: estimate }) })
}

const hasText = (chunk: ReadonlyArray<ProviderEvent>): boolean => {
  for (const event of chunk) if (event._tag === "TextDelta") return true
  return false
}

/** One stream's state: what it has shown, held back and taken out so far. */
const makeStripper = () => {
  let phase: Phase = "start"
  let held = ""
  let reasoningChars = 0

  const reasoning = (out: Array<ProviderEvent>, text: string) => {
    if (text.length === 0) return
    reasoningChars += text.length
    out.push(ProviderEvent.ReasoningDelta({ text }))
  }
  const visible = (out: Array<ProviderEvent>, text: string) => {
    if (text.length > 0) out.push(ProviderEvent.TextDelta({ text }))
  }

  const afterClose = (out: Array<ProviderEvent>, text: string) => {
    const trimmed = text.replace(/^\s+/, "")
    if (trimmed.length === 0) return
    phase = "text"
    visible(out, trimmed)
  }

  const insideText = (out: Array<ProviderEvent>, text: string) => {
    const all = held + text
    const lower = all.toLowerCase()
    const closer = findCloser(lower)
    if (closer !== undefined) {
      held = ""
      reasoning(out, all.slice(0, closer.at))
      phase = "after"
      afterClose(out, all.slice(closer.at + closer.length))
      return
    }
    const keep = partialCloserLength(lower)
    held = all.slice(all.length - keep)
    reasoning(out, all.slice(0, all.length - keep))
  }

  const startText = (out: Array<ProviderEvent>, text: string) => {
    const all = held + text
    const body = all.replace(/^\s+/, "")
    const lower = body.toLowerCase()
    // The longer opener first: `<thinking>` must not be read as `<think>` followed by "ing>".
    const opener = [...OPENERS].reverse().find((tag) => lower.startsWith(tag))
    if (opener !== undefined) {
      held = ""
      phase = "inside"
      insideText(out, body.slice(opener.length))
      return
    }
    if ((body.length === 0 && all.length <= MAX_LEADING_WHITESPACE) || (body.length > 0 && isPrefixOfOpener(lower))) {
      held = all
      return
    }
    held = ""
    phase = "text"
    visible(out, all)
  }

  /** Held text is resolved as what it turned out to be: plain text at the start, reasoning inside. */
  const flush = (out: Array<ProviderEvent>) => {
    if (held.length === 0) return
    if (phase === "start") visible(out, held)
    else if (phase === "inside") reasoning(out, held)
    held = ""
    if (phase === "start") phase = "text"
  }

  const push = (chunk: ReadonlyArray<ProviderEvent>): ReadonlyArray<ProviderEvent> => {
    // Past the start with nothing taken out (almost every answer), or no text yet and none held
    // (a pass that only calls a tool): the chunk goes on as it is.
    if (reasoningChars === 0 && (phase === "text" || (phase === "start" && held.length === 0 && !hasText(chunk)))) return chunk
    const out: Array<ProviderEvent> = []
    for (const event of chunk) {
      switch (event._tag) {
        case "TextDelta":
          if (phase === "text") out.push(event)
          else if (phase === "start") startText(out, event.text)
          else if (phase === "inside") insideText(out, event.text)
          else afterClose(out, event.text)
          break
        case "Usage":
          out.push(withEstimatedReasoning(event, reasoningChars + (phase === "inside" ? held.length : 0)))
          break
        case "ToolCall":
        case "Finish":
          flush(out)
          out.push(event)
          break
        default:
          out.push(event)
      }
    }
    return out
  }

  const end = (): ReadonlyArray<ProviderEvent> => {
    const out: Array<ProviderEvent> = []
    flush(out)
    return out
  }

  return { push, end }
}

/**
 * Stream transformer: a reasoning block at the start of the text becomes `ReasoningDelta`s; the
 * answer after it (leading whitespace dropped) stays `TextDelta`s. A tag anywhere else is left
 * as it is. Usage without a reasoning count gets an estimate of the reasoning taken out. Once an
 * answer without reasoning is under way, its chunks pass through untouched.
 */
export const stripReasoningTags = () =>
<E, R>(self: Stream.Stream<ProviderEvent, E, R>): Stream.Stream<ProviderEvent, E, R> =>
  decodeWith<ProviderEvent, ProviderEvent, never>(() => {
    const stripper = makeStripper()
    return {
      // The upstream's elements come as an array: one that passes untouched is emitted as it is.
      push: (input) => ({ out: stripper.push(Array.isArray(input) ? input : Array.from(input)) }),
      end: () => ({ out: stripper.end() })
    }
  })(self)

type Model = LanguageModel["Service"]

/** A model whose reasoning written into the text is taken out of the answer as it streams. */
const withReasoningTags = (model: Model): Model =>
  LanguageModel.of({
    name: model.name,
    stream: (request): Stream.Stream<ProviderEvent, ProviderError> => model.stream(request).pipe(stripReasoningTags())
  })

/** The same for any provider Layer. */
export const reasoningTagsLayer = <E, R>(layer: Layer.Layer<LanguageModel, E, R>): Layer.Layer<LanguageModel, E, R> =>
  Layer.effect(LanguageModel, Effect.map(LanguageModel, withReasoningTags)).pipe(Layer.provide(layer))
