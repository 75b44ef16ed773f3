import { assert, describe, it } from "vitest"
import type { ChatMessage } from "../../../src/domain/ChatMessage"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import { budgetRequest, type BudgetInput, ELIDED_HEAD_CHARS, ELIDED_TAIL_CHARS, elided, NOTE_TOKENS } from "../../../src/loop/context/budget"
import { type Exchange, exchangesOf } from "../../../src/loop/context/exchanges"
import { messageTokens, resultTokens, textTokens } from "../../../src/loop/context/tokenEstimate"
import type { GenerationRequest } from "../../../src/provider/GenerationRequest"
import { toolResultText } from "../../../src/provider/toolReplay"

/** Words that estimate at a steady rate (no case changes, digits or odd characters). */
const prose = (chars: number, seed = "lorem"): string => {
  const words = [seed, "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do"]
  let text = ""
  for (let index = 0; text.length < chars; index++) text += `${words[index % words.length]} `
  return text.slice(0, chars)
}

const entry = (name: string, result: string, id: string): ToolHistoryEntry => ({
  functionCall: { name, args: { url: `https://example.com/${id}` }, id },
  functionResponse: { name, response: { result } }
})

const user = (content: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({ role: "user", content, ...extra })
const image = { url: "https://example.com/cat.png", mimeType: "image/png" }

const request = (overrides: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: "m",
  apiKey: undefined,
  system: "You are a careful research assistant.",
  messages: [user("What do the pages say?")],
  tools: [],
  functionHistory: [],
  ...overrides
})

const plan = (req: GenerationRequest, limit: number, overrides: Partial<BudgetInput> = {}) =>
  budgetRequest({
    request: req,
    exchanges: exchangesOf(req.functionHistory),
    question: req.messages.findLastIndex((message) => message.role === "user"),
    limit,
    compaction: "elide",
    ...overrides
  })

const results = (req: GenerationRequest) => req.functionHistory.map(toolResultText)
const noteOf = (req: GenerationRequest) => req.messages.find((message) => message.content.startsWith("[Context note"))?.content

/** A research turn: `pages` fetches of `chars` characters each, and a short question. */
const chain = (pages: number, chars: number, history: ReadonlyArray<ChatMessage> = []) =>
  request({
    messages: [...history, user("Summarise these pages for me.")],
    functionHistory: Array.from({ length: pages }, (_, index) => entry("fetch_url", prose(chars, `page${index}`), `call_${index}`))
  })

describe("the context budget (pure: items and a limit in, a request out) [issue 23]", () => {
  it("a request that fits is returned as it is, the same object", () => {
    const req = chain(3, 2_000)
    const outcome = plan(req, 100_000)
    assert.strictEqual(outcome.request, req)
    assert.isTrue(outcome.fits)
    assert.strictEqual(outcome.tokens, outcome.originalTokens)
    assert.isFalse(outcome.counted, "under the limit by its characters alone: not even counted")
    const counted = plan(req, plan(req, 1).originalTokens)
    assert.strictEqual(counted.request, req, "counted and fits: still the same object")
    assert.isTrue(counted.counted)
  })

  it("rule 1: older tool results become head and tail with a marker; the newest stays whole; nothing else changes", () => {
    const history = [user("earlier question", { name: "ann" }), { role: "assistant", content: "earlier answer" } satisfies ChatMessage]
    const req = chain(4, 40_000, history)
    const full = plan(req, 1).originalTokens
    const outcome = plan(req, Math.floor(full * 0.5))
    assert.isTrue(outcome.fits)
    const shown = results(outcome.request)
    assert.strictEqual(shown.length, 4)
    // The newest result is the page as it came.
    assert.strictEqual(shown[3], toolResultText(req.functionHistory[3]!))
    for (const [index, text] of shown.slice(0, 3).entries()) {
      const original = toolResultText(req.functionHistory[index]!)
      assert.isTrue(text.startsWith(original.slice(0, ELIDED_HEAD_CHARS)), "the head is kept")
      assert.isTrue(text.endsWith(original.slice(-ELIDED_TAIL_CHARS)), "the tail is kept")
      assert.include(text, `${(40_000 - ELIDED_HEAD_CHARS - ELIDED_TAIL_CHARS).toLocaleString("en-US")} of 40,000 characters of this fetch_url result were left out`)
      assert.include(text, "Call fetch_url again if you need them")
    }
    assert.strictEqual(outcome.elidedResults.length, 3)
    assert.deepStrictEqual(outcome.request.messages.slice(0, 3), req.messages, "history and the question are untouched")
    assert.include(noteOf(outcome.request), "3 earlier tool results show only their start and end")
    assert.strictEqual(outcome.request.system, req.system)
  })

  it("rule 1 elides oldest first, only as far as needed, and an elided result is the same object on every pass", () => {
    const req = chain(4, 40_000)
    const full = plan(req, 1).originalTokens
    const oneElided = full - textTokens(prose(40_000, "page0")) + 400
    const outcome = plan(req, oneElided)
    assert.strictEqual(outcome.elidedResults.length, 1)
    assert.strictEqual(outcome.elidedResults[0], req.functionHistory[0])
    assert.strictEqual(results(outcome.request)[1], toolResultText(req.functionHistory[1]!))
    const again = plan({ ...req, functionHistory: [...req.functionHistory, entry("fetch_url", "short", "call_x")] }, oneElided)
    assert.strictEqual(again.request.functionHistory[0], outcome.request.functionHistory[0], "stable across passes (prompt caches keep working)")
  })

  it("rule 2 comes only after rule 1: history images go first, then the oldest messages, never system items", () => {
    const history: Array<ChatMessage> = [
      { role: "system", content: "[Short-term memory] the user likes cats" },
      user(prose(4_000, "old"), { images: [image, image] }),
      { role: "assistant", content: prose(4_000, "reply") },
      user(prose(4_000, "newer"), { images: [image] })
    ]
    const req = chain(3, 40_000, history)
    const full = plan(req, 1).originalTokens
    // The request once rule 1 has elided both older results.
    const afterRule1 = full - [0, 1].reduce((freed, index) => freed + resultTokens(req.functionHistory[index]!) - resultTokens(elided(req.functionHistory[index]!)!), 0)
    const outcome = plan(req, afterRule1 + NOTE_TOKENS - 1_500)
    assert.strictEqual(outcome.elidedResults.length, 2, "every older result is elided first")
    assert.deepStrictEqual(outcome.droppedImages, history.slice(1, 2), "the images of the oldest history message first, and only as many as needed")
    assert.strictEqual(outcome.droppedMessages.length, 0, "no message goes while dropping images is enough")
    assert.isUndefined(outcome.request.messages[1]?.images)
    assert.deepStrictEqual(outcome.request.messages[3]?.images, [image])
    const tighter = plan(req, afterRule1 + NOTE_TOKENS - 5_000)
    assert.strictEqual(tighter.droppedImages.length, 2, "every image went before any message")
    assert.isAbove(tighter.droppedMessages.length, 0)
    assert.strictEqual(tighter.droppedMessages[0], history[1], "the oldest message goes first")
    assert.strictEqual(tighter.request.messages[0], history[0], "a system item is never dropped")
    assert.include(tighter.request.messages.map((message) => message.content), "Summarise these pages for me.")
    assert.include(noteOf(tighter.request), "older channel message")
  })

  it("rule 4: the newest result is cut to what fits, with a marker, once older results and history are spent", () => {
    const req = request({
      messages: [user("old", { images: [image] }), user("Read it.")],
      functionHistory: [entry("fetch_url", prose(3_000, "first"), "c1"), entry("fetch_url", prose(200_000, "big"), "c2")]
    })
    const outcome = plan(req, 20_000)
    assert.isTrue(outcome.fits)
    assert.strictEqual(outcome.elidedResults.length, 1)
    assert.strictEqual(outcome.droppedMessages.length, 1)
    const newest = results(outcome.request)[1]!
    assert.isTrue(newest.startsWith(prose(1_000, "big")))
    assert.match(newest, /the rest of this result \([\d,]+ of 200,000 characters\) was cut to fit the model's context window\. Call fetch_url again with narrower arguments/)
    assert.isDefined(outcome.cutResult)
    assert.isBelow(outcome.cutResult!.keptChars, 200_000)
    assert.isUndefined(outcome.cutQuestion, "the question is not cut while cutting the result is enough")
    assert.strictEqual(outcome.request.messages.at(-2)?.content, "Read it.")
  })

  it("rule 5: an oversized message being answered is cut last: its start and end kept, a marker, the rest kept whole", () => {
    const question = `${prose(60_000, "start")}THE ACTUAL QUESTION: what is wrong here?`
    const system: ChatMessage = { role: "system", content: "[restart payload of this turn]" }
    const req = request({ messages: [user("older"), user(question), system] })
    const outcome = plan(req, 4_000, { question: 1 })
    assert.isTrue(outcome.fits)
    const cut = outcome.request.messages.find((message) => message.content.startsWith("start"))!
    assert.isTrue(cut.content.startsWith(prose(2_000, "start")))
    assert.isTrue(cut.content.endsWith("THE ACTUAL QUESTION: what is wrong here?"), "the end (where a question usually is) is kept")
    assert.include(cut.content, `characters of this message were left out: it is longer than the model's context window allows. …]`)
    assert.include(cut.content, ` of ${question.length.toLocaleString("en-US")} characters`)
    assert.strictEqual(outcome.cutQuestion?.totalChars, question.length)
    assert.deepStrictEqual(outcome.droppedMessages, req.messages.slice(0, 1), "older history went before the question was cut")
    assert.include(outcome.request.messages.map((message) => message.content), system.content, "the turn's own items after the question stay")
    assert.include(noteOf(outcome.request), "the user's message was cut")
  })

  it("the question, the system prompt and the newest result are never dropped, however small the limit", () => {
    const req = chain(3, 30_000, [user("history")])
    const outcome = plan(req, 10)
    assert.isFalse(outcome.fits)
    assert.strictEqual(outcome.request.system, req.system)
    assert.isTrue(outcome.request.messages.some((message) => message.content.startsWith("Summarise these pages")))
    assert.strictEqual(outcome.request.functionHistory.at(-1)?.functionCall.id, "call_2")
  })

  it("the items after the message being answered are this turn's own: never dropped, whatever their role", () => {
    const restart: ChatMessage = { role: "user", content: `[metadata of the recent messages] ${prose(3_000, "meta")}` }
    const continuation: ChatMessage = { role: "user", content: "[Your reply was interrupted…]" }
    const req = request({ messages: [user(prose(3_000, "old")), user("What happened?"), restart, continuation] })
    const outcome = plan(req, 200, { question: 1 })
    assert.deepStrictEqual(outcome.droppedMessages, req.messages.slice(0, 1), "only the history before the question goes")
    assert.include(outcome.request.messages, restart)
    assert.include(outcome.request.messages, continuation)
  })

  it("pairing: a call is never separated from its result; exchanges of several calls are kept or left out whole", () => {
    const parallel = (pass: number): Exchange => ({
      entries: [entry("fetch_url", prose(30_000, `a${pass}`), `a${pass}`), entry("web_search", prose(30_000, `b${pass}`), `b${pass}`)]
    })
    const exchanges = Array.from({ length: 30 }, (_, pass) => parallel(pass))
    const req = request({ functionHistory: exchanges.flatMap((exchange) => exchange.entries) })
    const outcome = budgetRequest({ request: req, exchanges, question: 0, limit: 6_000, compaction: "elide" })
    const ids = outcome.request.functionHistory.map((e) => e.functionCall.id!)
    // Every call left has its own result, and both calls of a pass are there or neither.
    for (const kept of outcome.request.functionHistory) assert.strictEqual(kept.functionResponse.name, kept.functionCall.name)
    for (let pass = 0; pass < 30; pass++) assert.strictEqual(ids.includes(`a${pass}`), ids.includes(`b${pass}`), `pass ${pass}`)
    assert.isAbove(outcome.droppedExchanges.length, 0)
    assert.deepStrictEqual(outcome.droppedExchanges, exchanges.slice(0, outcome.droppedExchanges.length), "the oldest go first")
    assert.deepStrictEqual(ids.slice(-2), ["a29", "b29"], "the newest exchange stays")
    assert.isTrue(outcome.fits)
    assert.include(noteOf(outcome.request), `${outcome.droppedExchanges.length} earlier tool calls of this turn were left out (fetch_url, web_search)`)
  })

  it("compaction: summarize asks for a summary of the oldest exchanges, and a summary replaces them", () => {
    const req = chain(60, 8_000)
    const elide = plan(req, 8_000)
    const summarize = plan(req, 8_000, { compaction: "summarize" })
    assert.isAbove(elide.droppedExchanges.length, 0)
    assert.isUndefined(elide.wantsSummary)
    assert.strictEqual(summarize.wantsSummary, summarize.droppedExchanges.length)
    const covers = summarize.wantsSummary!
    const summarized = plan(req, 8_000, { compaction: "summarize", summary: { covers, text: "pages 0-n said little of use" } })
    assert.strictEqual(summarized.request.functionHistory[0]?.functionCall.id, `call_${covers}`)
    const summary = summarized.request.messages.find((message) => message.content.startsWith("[Summary of the first"))
    assert.include(summary?.content, `[Summary of the first ${covers} tool calls of this turn`)
    assert.include(summary?.content, "pages 0-n said little of use")
    assert.isTrue(summarized.fits)
  })

  it("estimates grow with images and text, and the note's size is within its reserve", () => {
    assert.isAbove(messageTokens(user("hi", { images: [image] })), messageTokens(user("hi")) + 500)
    assert.isAbove(textTokens(prose(4_000)), 700)
    assert.isBelow(textTokens(prose(4_000)), 1_300)
    assert.isAbove(textTokens("これは日本語のテキストです"), 10)
  })
})
