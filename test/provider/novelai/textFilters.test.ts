import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { SceneDetailsFilter } from "../../../src/provider/novelai/sceneDetails"
import { SentenceHold } from "../../../src/provider/novelai/sentenceHold"
import { SpeakerGuard } from "../../../src/provider/novelai/speakerGuard"

/** Cuts `text` at the given offsets. */
const cut = (text: string, offsets: ReadonlyArray<number>): ReadonlyArray<string> => {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<string> = []
  let previous = 0
  for (const point of [...points, text.length]) {
    pieces.push(text.slice(previous, point))
    previous = point
  }
  return pieces
}

const runDetails = (pieces: ReadonlyArray<string>) => {
  const filter = new SceneDetailsFilter()
  let visible = ""
  const details: Array<string> = []
  for (const piece of [...pieces.map((p) => filter.feed(p)), filter.end()]) {
    visible += piece.visible
    details.push(...piece.details)
  }
  return { visible, details }
}

const runGuard = (pieces: ReadonlyArray<string>, speakers: ReadonlyArray<string>) => {
  const guard = new SpeakerGuard(speakers)
  let released = ""
  for (const piece of pieces) {
    const step = guard.feed(piece)
    released += step.released
    if (step.stop) return { released, stop: true }
  }
  return { released: released + guard.end(), stop: false }
}

const textArb = fc.array(
  fc.constantFrom("She smiles. ", "<details>", "<summary>Scene</summary>", "Kitchen, night", "</details>", "<DETAILS open>", "</DETAILS>", "<de", "\n", "Ana", ":", " hi", "Menu: ", "!", "é😀"),
  { maxLength: 12 }
).map((parts) => parts.join(""))

describe("NovelAI text filters (pure)", () => {
  it("scene details: a block is drained, its summary removed; an unclosed block at the end is still metadata; a partial opener is text", () => {
    assert.deepStrictEqual(runDetails(["A <details><summary>S</summary> Cafe </details>B"]), { visible: "A B", details: ["Cafe"] })
    assert.deepStrictEqual(runDetails(["A <details>Mood: warm"]), { visible: "A ", details: ["Mood: warm"] })
    assert.deepStrictEqual(runDetails(["A <deta"]), { visible: "A <deta", details: [] })
    assert.deepStrictEqual(runDetails(["<details>", "x".repeat(20_000), "</details>"]).details[0]?.length, 8000, "the body is bounded")
  })

  it("property: scene details decode the same under any split", () => {
    fc.assert(fc.property(textArb, fc.array(fc.nat(), { maxLength: 10 }), (text, offsets) => {
      assert.deepStrictEqual(runDetails(cut(text, offsets)), runDetails([text]))
    }), { numRuns: 400 })
  })

  it("speaker guard: stops before a known label at a line start, holds an undecided line, releases one that diverges", () => {
    assert.deepStrictEqual(runGuard(["Sure.\nAna: hi"], ["Ana"]), { released: "Sure.", stop: true })
    assert.deepStrictEqual(runGuard(["Sure.\n", "An"], ["Ana"]), { released: "Sure.\nAn", stop: false })
    assert.deepStrictEqual(runGuard(["Menu:\nAnd cake"], ["Ana"]), { released: "Menu:\nAnd cake", stop: false })
    assert.deepStrictEqual(runGuard(["Ana: at the start is not a line start"], ["Ana"]), { released: "Ana: at the start is not a line start", stop: false })
  })

  it("property: the speaker guard decides the same under any split", () => {
    fc.assert(fc.property(textArb, fc.array(fc.nat(), { maxLength: 10 }), (text, offsets) => {
      assert.deepStrictEqual(runGuard(cut(text, offsets), ["Ana", "Mira"]), runGuard([text], ["Ana", "Mira"]))
    }), { numRuns: 400 })
  })

  it("sentence hold: releases through the last sentence end, holds the unfinished rest; a single quote is no boundary", () => {
    const hold = new SentenceHold()
    assert.strictEqual(hold.feed("It's fine. I don't"), "It's fine. ")
    assert.strictEqual(hold.pending, "I don't")
    assert.isFalse(hold.pendingEndsSentence)
    assert.strictEqual(hold.feed(" know!"), "")
    assert.isTrue(hold.pendingEndsSentence)
    assert.strictEqual(hold.flush(), "I don't know!")
    const long = new SentenceHold(10)
    assert.strictEqual(long.feed("abcdefghijklmnop"), "abcdefghijklmnop", "past the cap the text is released anyway")
  })

  it("property: the sentence hold loses and reorders nothing", () => {
    fc.assert(fc.property(textArb, fc.array(fc.nat(), { maxLength: 10 }), (text, offsets) => {
      const hold = new SentenceHold()
      const released = cut(text, offsets).map((piece) => hold.feed(piece)).join("")
      assert.strictEqual(released + hold.flush(), text)
    }), { numRuns: 400 })
  })
})
