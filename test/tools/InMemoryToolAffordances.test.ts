import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { make } from "../../src/tools/InMemoryToolAffordances"

describe("ToolAffordances in memory (seed step 7, design decision 2)", () => {
  it.effect("a retained tool stays for the next N turns of its channel only", () =>
    Effect.gen(function*() {
      const affordances = yield* make
      yield* affordances.retain("c1", "web_search", 2)
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["web_search"])
      assert.deepStrictEqual(yield* affordances.retained("c2"), [])
      yield* affordances.turnEnded("c1") // the retaining turn
      yield* affordances.turnEnded("c1") // next turn 1
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["web_search"])
      yield* affordances.turnEnded("c1") // next turn 2
      assert.deepStrictEqual(yield* affordances.retained("c1"), [])
    }))

  it.effect("retaining again never shortens a window; zero turns retain nothing", () =>
    Effect.gen(function*() {
      const affordances = yield* make
      yield* affordances.retain("c1", "a", 3)
      yield* affordances.retain("c1", "a", 1)
      yield* affordances.retain("c1", "b", 0)
      for (let i = 0; i < 3; i++) yield* affordances.turnEnded("c1")
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["a"])
      yield* affordances.turnEnded("c1")
      assert.deepStrictEqual(yield* affordances.retained("c1"), [])
    }))
})
