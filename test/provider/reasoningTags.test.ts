import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import fc from "fast-check"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { TokenUsage } from "../../src/domain/TokenUsage"
import { stripReasoningTags } from "../../src/provider/reasoningTags"

/** `text` cut at `cuts` (sorted, deduplicated), each piece one chunk of one TextDelta: the worst a vendor can split. */
const pieces = (text: string, cuts: ReadonlyArray<number>): ReadonlyArray<string> => {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
  const out: Array<string> = []
  let from = 0
  for (const point of [...points, text.length]) {
    if (point > from) out.push(text.slice(from, point))
    from = point
  }
  return out
}

/** Runs the transformer over the pieces (one chunk each) and the trailing events. */
const run = (parts: ReadonlyArray<string>, trailing: ReadonlyArray<ProviderEvent> = []) => {
  const upstream = Stream.fromArrays<ReadonlyArray<ReadonlyArray<ProviderEvent>>>(...parts.map((part) => [ProviderEvent.TextDelta({ text: part })]), trailing)
  return Effect.runSync(Stream.runCollect(upstream.pipe(stripReasoningTags())))
}

const textOf = (events: ReadonlyArray<ProviderEvent>, tag: "TextDelta" | "ReasoningDelta") =>
  events.flatMap((event) => (event._tag === tag ? [event.text] : [])).join("")

/** Every state the visible reply goes through (each TextDelta appended): what a streaming edit could show. */
const visibleStates = (events: ReadonlyArray<ProviderEvent>) => {
  const states: Array<string> = []
  let shown = ""
  for (const event of events) {
    if (event._tag !== "TextDelta") continue
    shown += event.text
    states.push(shown)
  }
  return states
}

const cuts = fc.array(fc.nat({ max: 400 }), { maxLength: 40 })

describe("reasoning written into the text (<think>…</think>), taken out as it streams", () => {
  it("property: however the stream is split, the reply only ever shows a prefix of the answer, and the reasoning is all kept", () => {
    const cases = fc.record({
      opener: fc.constantFrom("<think>", "<thinking>", "<THINK>", "<Thinking>"),
      leading: fc.constantFrom("", "\n", "  \n"),
      thought: fc.string({ maxLength: 60 }).map((value) => value.replace(/<\/?think/gi, "")),
      gap: fc.constantFrom("", "\n\n", " "),
      answer: fc.string({ minLength: 1, maxLength: 60 }).filter((value) => value.trim().length > 0).map((value) => value.trimStart())
    })
    fc.assert(fc.property(cases, cuts, ({ answer, gap, leading, opener, thought }, splits) => {
      const closer = opener.toLowerCase() === "<thinking>" ? "</thinking>" : "</think>"
      const raw = `${leading}${opener}${thought}${closer}${gap}${answer}`
      const events = run(pieces(raw, splits))
      assert.strictEqual(textOf(events, "TextDelta"), answer)
      assert.strictEqual(textOf(events, "ReasoningDelta"), thought)
      for (const state of visibleStates(events)) assert.isTrue(answer.startsWith(state), JSON.stringify({ state, answer }))
    }), { numRuns: 400 })
  })

  it("property: text that does not open with a tag is passed through whole, whatever the split", () => {
    const plain = fc.string({ minLength: 1, maxLength: 80 }).filter((value) => !/^\s*<think/i.test(value))
    fc.assert(fc.property(plain, cuts, (text, splits) => {
      const events = run(pieces(text, splits))
      assert.strictEqual(textOf(events, "TextDelta"), text)
      assert.strictEqual(textOf(events, "ReasoningDelta"), "")
    }), { numRuns: 400 })
  })

  it("a tag later in the answer, a near miss and a lone '<' stay visible; a held prefix is released at the end", () => {
    assert.strictEqual(textOf(run(["Use <think> tags like this."]), "TextDelta"), "Use <think> tags like this.")
    assert.strictEqual(textOf(run(["<thi", "s is not a tag"]), "TextDelta"), "<this is not a tag")
    assert.strictEqual(textOf(run(["<b>bold</b>"]), "TextDelta"), "<b>bold</b>")
    // The answer was only the start of a tag: it is shown once the stream ends.
    assert.strictEqual(textOf(run(["<thin"]), "TextDelta"), "<thin")
    // An unclosed block: all reasoning, no visible reply.
    const unclosed = run(["<think>still going", " and never closed</th"])
    assert.strictEqual(textOf(unclosed, "TextDelta"), "")
    assert.strictEqual(textOf(unclosed, "ReasoningDelta"), "still going and never closed</th")
    // A second block after the answer began is the answer's.
    assert.strictEqual(textOf(run(["<think>a</think>Answer <think>b</think>"]), "TextDelta"), "Answer <think>b</think>")
  })

  it("a tool call in the middle of the block ends it; usage without a reasoning count gets the estimate, capped by the output", () => {
    const call = ProviderEvent.ToolCall({ call: { name: "web_search", args: {} } })
    const withCall = run(["<think>plan: sear", "ch</th"], [call])
    assert.strictEqual(textOf(withCall, "ReasoningDelta"), "plan: search</th")
    assert.strictEqual(withCall.at(-1)?._tag, "ToolCall")
    const usage = (reasoningTokens?: number) =>
      ProviderEvent.Usage({ usage: TokenUsage({ inputTokens: 10, outputTokens: 50, totalTokens: 60, ...(reasoningTokens === undefined ? {} : { reasoningTokens }) }) })
    const counted = (events: ReadonlyArray<ProviderEvent>) => events.flatMap((event) => (event._tag === "Usage" ? [event.usage.reasoningTokens] : []))
    assert.deepStrictEqual(counted(run([`<think>${"x".repeat(40)}</think>Hi`], [usage()])), [10])
    assert.deepStrictEqual(counted(run([`<think>${"x".repeat(4000)}</think>Hi`], [usage()])), [50])
    assert.deepStrictEqual(counted(run([`<think>${"x".repeat(40)}</think>Hi`], [usage(3)])), [3], "the vendor's own count wins")
    assert.deepStrictEqual(counted(run(["no reasoning here"], [usage()])), [undefined])
  })
})
