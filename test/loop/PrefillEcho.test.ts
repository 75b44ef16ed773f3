import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { feedEcho, MIN_GUARDED_PREFILL, startEcho } from "../../src/loop/PrefillEcho"
import { cutAt } from "../support/cutAt"

/** Feeds `chunks` through a fresh guard for `prefill`; returns what would be delivered. */
const run = (prefill: string, chunks: ReadonlyArray<string>): string => {
  let state = startEcho(prefill)
  let out = ""
  for (const chunk of chunks) {
    const [deliverable, next] = feedEcho(state, chunk)
    out += deliverable
    state = next
  }
  return out
}


const word = fc.stringMatching(/^[a-z]{1,8}$/)
const prose = fc.array(word, { minLength: 3, maxLength: 40 }).map((words) => words.join(" ")).filter((text) => text.length >= MIN_GUARDED_PREFILL)
/** A continuation that cannot be mistaken for more of the prefill: it starts with a mark the prefill never has. */
const continuation = fc.array(word, { maxLength: 10 }).map((words) => `§ ${words.join(" ")}`)
const cuts = fc.array(fc.nat({ max: 1000 }), { maxLength: 8 })

describe("PrefillEcho (fallback continuation guard, decision 4, issue 11.9)", () => {
  it("a genuine continuation is delivered untouched", () => {
    assert.strictEqual(run("The capital of France", [" is Paris", "."]), " is Paris.")
  })

  it("an exact restart of the whole reply is dropped", () => {
    assert.strictEqual(run("The capital of France is Paris", ["The capital of France", " is Paris, and it is big."]), ", and it is big.")
  })

  it("a restart from a later word (the overlap with the end of the reply) is dropped, not only a repeat at the very start", () => {
    const shown = "Here is the plan. First we pack the car, then we drive to the coast"
    assert.strictEqual(run(shown, [" then we drive", " to the coast and swim."]), " and swim.")
    assert.strictEqual(run(shown, ["we pack the car, then we drive to the coast, and we eat."]), ", and we eat.")
  })

  it("the delivered text ended in a space: what follows the restart does not add another", () => {
    assert.strictEqual(run("It sits on the Seine, ", ["It sits on the Seine, and it is old."]), "and it is old.")
  })

  it("an overlap shorter than the minimum is kept (a continuation may start like the reply ended)", () => {
    assert.strictEqual(run("We went to the coast and then", [" then we swam."]), " then we swam.")
  })

  it("output still held when the pass ends was a repeat and is dropped", () => {
    assert.strictEqual(run("The capital of France is Paris", ["The capital of"]), "")
  })

  it("property: a full restart in any chunking delivers exactly the new text", () => {
    fc.assert(fc.property(prose, continuation, cuts, (shown, next, at) => {
      assert.strictEqual(run(shown, cutAt(`${shown} ${next}`, at)), ` ${next}`)
    }))
  })

  it("property: a restart from any word at least the minimum from the end delivers exactly the new text", () => {
    fc.assert(fc.property(prose, continuation, cuts, fc.nat(), (shown, next, at, pick) => {
      const starts = [...shown.matchAll(/\b[a-z]/g)].map((match) => match.index).filter((index) => shown.length - index >= MIN_GUARDED_PREFILL)
      const from = starts[pick % starts.length] ?? 0
      assert.strictEqual(run(shown, cutAt(`${shown.slice(from)} ${next}`, at)), ` ${next}`)
    }))
  })

  it("property: a continuation that never repeats is delivered whole, in any chunking", () => {
    fc.assert(fc.property(prose, continuation, cuts, (shown, next, at) => {
      assert.strictEqual(run(shown, cutAt(next, at)), next)
    }))
  })
})
