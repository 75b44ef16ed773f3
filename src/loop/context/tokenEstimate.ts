import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolDeclaration } from "../../domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import { callArguments, preToolText, toolImages, toolResultText } from "../../provider/toolReplay"

/**
 * Token estimates of request items, before the request is sent. No real tokenizer: a pure-JS
 * o200k tokenizer costs +94 MB of memory and 340 ms to load (cl100k +57 MB), more than the
 * Discord front's whole memory budget, and fits OpenAI's models only. Instead, a character-class
 * estimate, measured against o200k and cl100k on prose, code, JSON, CJK, Cyrillic and emoji text
 * (within 0.8–1.4× of both), which each pass corrects by the prompt tokens the provider reported
 * for the previous one (see `ContextBudget`).
 *
 * Raw estimates of an item are memoised on the item: history entries, context items and tool
 * declarations are immutable values that stay the same over a turn's passes, so each is counted
 * once. The memo is only a cache of a pure function of the object: sharing it between fibers
 * changes no result.
 */

/** Tokens an image costs a vision model, about (OpenAI high detail ~765, Anthropic ~1600, Gemini 258). */
export const IMAGE_TOKENS = 1_000
/** Framing of a message (role, separators) and of a tool exchange (ids, names, wrappers). */
export const MESSAGE_OVERHEAD = 4
export const EXCHANGE_OVERHEAD = 12

const isAsciiLetter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
const isCjk = (code: number) =>
  (code >= 0x3000 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af) || (code >= 0xf900 && code <= 0xfaff) ||
  (code >= 0xff00 && code <= 0xffef)

/**
 * Tokens of a text: ASCII letters 4 to a token, digits 2, a case change (hashes, base64) 0.3,
 * punctuation 0.6, white space 0.1, CJK 1 a character, other letters (Cyrillic, Greek, Arabic,
 * accented Latin) 2.5 to a token, astral characters (emoji) 2 each.
 */
export const textTokens = (text: string): number => {
  let letters = 0
  let digits = 0
  let flips = 0
  let punctuation = 0
  let space = 0
  let cjk = 0
  let other = 0
  let astral = 0
  let upper = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 128) {
      if (isAsciiLetter(code)) {
        letters++
        const isUpper = code <= 90
        if (isUpper !== upper && index > 0) flips++
        upper = isUpper
      } else if (code >= 48 && code <= 57) digits++
      else if (code === 32 || code === 9 || code === 10 || code === 13) space++
      else punctuation++
    } else if (isCjk(code)) cjk++
    else if (code >= 0xd800 && code <= 0xdbff) {
      astral++
      index++
    } else other++
  }
  return Math.ceil(letters / 4 + digits / 2 + flips * 0.3 + punctuation * 0.6 + space * 0.1 + cjk + other / 2.5 + astral * 2)
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

export const entryTokens = (entry: ToolHistoryEntry): number => callTokens(entry) + resultTokens(entry)

/** A tool declaration: name, description and JSON schema. */
export const declarationTokens = (tool: ToolDeclaration): number =>
  memoised(tool, (t) => textTokens(t.name) + textTokens(t.description) + textTokens(JSON.stringify(t.parameters) ?? "") + EXCHANGE_OVERHEAD)
