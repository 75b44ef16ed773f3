import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolDeclaration } from "../../domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import { callArguments, preToolText, toolImages, toolResultText } from "../../provider/toolReplay"

/**
 * Token estimates of request items, before the request is sent. No real tokenizer: a pure-JS
 * o200k tokenizer costs +94 MB of memory and 340 ms to load (cl100k +57 MB), more than the
 * Discord front's whole memory budget, and fits OpenAI's models only. Instead, a character-class
 * estimate, measured against o200k and cl100k on prose, code, JSON, CJK, Cyrillic and emoji text
 * (within 0.8–1.7× of both; Cyrillic on o200k the highest), which each pass corrects by the prompt tokens the provider reported
 * for the previous one (see `ContextBudget`).
 *
 * Raw estimates of an item are memoised on the item: history entries, context items and tool
 * declarations are immutable values that stay the same over a turn's passes, so each is counted
 * once. The memo is only a cache of a pure function of the object: sharing it between fibers
 * changes no result.
 */

/** Tokens an image costs a vision model, about (OpenAI high detail ~765, Anthropic ~1600, Gemini 258). */
const IMAGE_TOKENS = 1_000
/** Framing of a message (role, separators) and of a tool exchange (ids, names, wrappers). */
export const MESSAGE_OVERHEAD = 4
const EXCHANGE_OVERHEAD = 12

/** ASCII character classes: 1 upper-case letter, 2 lower-case letter, 3 digit, 4 white space, 5 punctuation. */
const ASCII_CLASS = new Uint8Array(128)
for (let code = 0; code < 128; code++) {
  ASCII_CLASS[code] = code >= 65 && code <= 90
    ? 1
    : code >= 97 && code <= 122
    ? 2
    : code >= 48 && code <= 57
    ? 3
    : code === 32 || code === 9 || code === 10 || code === 13
    ? 4
    : 5
}

/**
 * Tokens of a text: ASCII letters 4 to a token, digits 2, a change of letter case (hashes,
 * base64) 0.3, punctuation 0.6, white space 0.1, CJK 1 a character, other letters (Cyrillic,
 * Greek, Arabic, accented Latin) 2.5 to a token, astral characters (emoji) 2 each. One pass over
 * the characters with a class table (about 10 ns a character); a long text is counted on 32
 * evenly spread samples of 256 characters and scaled, so no item costs more than ~80 µs.
 */
const countTokens = (text: string, from: number, to: number): number => {
  let letters = 0
  let digits = 0
  let flips = 0
  let punctuation = 0
  let space = 0
  let cjk = 0
  let other = 0
  let astral = 0
  let lastCase = 0
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index)
    if (code < 128) {
      const kind = ASCII_CLASS[code]!
      if (kind <= 2) {
        letters++
        if (kind !== lastCase) {
          if (lastCase !== 0) flips++
          lastCase = kind
        }
      } else if (kind === 3) digits++
      else if (kind === 4) space++
      else punctuation++
    } else if ((code >= 0x3000 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xffef)) {
      cjk++
    } else if (code >= 0xd800 && code <= 0xdbff) astral++
    // A low surrogate is counted with its pair.
    else if (code < 0xdc00 || code > 0xdfff) other++
  }
  return letters / 4 + digits / 2 + flips * 0.3 + punctuation * 0.6 + space * 0.1 + cjk + other / 2.5 + astral * 2
}

/** Texts longer than this are estimated from evenly spread samples (a bounded cost for any size). */
const SAMPLED_ABOVE = 16_384
const SAMPLES = 32
const SAMPLE_CHARS = 256

/** Estimated tokens of a text (the rules above), whole up to 16 KiB, from samples beyond. */
export const textTokens = (text: string): number => {
  const length = text.length
  if (length <= SAMPLED_ABOVE) return Math.ceil(countTokens(text, 0, length))
  const stride = Math.floor((length - SAMPLE_CHARS) / (SAMPLES - 1))
  let sampled = 0
  for (let sample = 0; sample < SAMPLES; sample++) sampled += countTokens(text, sample * stride, sample * stride + SAMPLE_CHARS)
  return Math.ceil(sampled * (length / (SAMPLES * SAMPLE_CHARS)))
}

const memo = new WeakMap<object, number>()
/** The result and the call of one entry are memoised apart (one object each), so an entry keys its result by a companion. */
const resultKeys = new WeakMap<ToolHistoryEntry, object>()
const resultKey = (entry: ToolHistoryEntry): object => {
  const known = resultKeys.get(entry)
  if (known !== undefined) return known
  const key = {}
  resultKeys.set(entry, key)
  return key
}

const memoised = <A extends object>(item: A, count: (item: A) => number): number => {
  const known = memo.get(item)
  if (known !== undefined) return known
  const counted = count(item)
  memo.set(item, counted)
  return counted
}

/** A context message: its text, its images, its framing. */
export const messageTokens = (message: ChatMessage): number =>
  memoised(message, (m) => textTokens(m.content) + (m.name === undefined ? 0 : textTokens(m.name)) + (m.images?.length ?? 0) * IMAGE_TOKENS + MESSAGE_OVERHEAD)

/** The result part of an entry, as it is replayed (the summary string, or the result's JSON), with its images. */
export const resultTokens = (entry: ToolHistoryEntry): number =>
  memoised(resultKey(entry), () => textTokens(toolResultText(entry)) + toolImages(entry).length * IMAGE_TOKENS)

/** The call part of an entry: name, arguments, the text the pass showed before it. */
export const callTokens = (entry: ToolHistoryEntry): number =>
  memoised(entry, () =>
    textTokens(entry.functionCall.name) + textTokens(JSON.stringify(callArguments(entry)) ?? "") +
    textTokens(preToolText(entry) ?? "") + EXCHANGE_OVERHEAD)

/** A tool declaration: name, description and JSON schema. */
export const declarationTokens = (tool: ToolDeclaration): number =>
  memoised(tool, (t) => textTokens(t.name) + textTokens(t.description) + textTokens(JSON.stringify(t.parameters) ?? "") + EXCHANGE_OVERHEAD)

/**
 * Upper bounds, without reading the text: no character estimates above one token, so a request
 * whose characters (plus framing and images) fit needs no counting at all.
 */
export const messageUpperBound = (message: ChatMessage): number =>
  message.content.length + (message.name?.length ?? 0) + (message.images?.length ?? 0) * IMAGE_TOKENS + MESSAGE_OVERHEAD

const upperMemo = new WeakMap<object, number>()

export const entryUpperBound = (entry: ToolHistoryEntry): number => {
  const known = upperMemo.get(entry)
  if (known !== undefined) return known
  const bound = toolResultText(entry).length + (JSON.stringify(callArguments(entry))?.length ?? 0) + entry.functionCall.name.length +
    (preToolText(entry)?.length ?? 0) + toolImages(entry).length * IMAGE_TOKENS + EXCHANGE_OVERHEAD
  upperMemo.set(entry, bound)
  return bound
}

export const declarationUpperBound = (tool: ToolDeclaration): number => {
  const known = upperMemo.get(tool)
  if (known !== undefined) return known
  const bound = tool.name.length + tool.description.length + (JSON.stringify(tool.parameters)?.length ?? 0) + EXCHANGE_OVERHEAD
  upperMemo.set(tool, bound)
  return bound
}
