import { assert, describe, it } from "@effect/vitest"
import { addUsage, makeUsage } from "../../src/domain/TokenUsage"

describe("TokenUsage", () => {
  it("makeUsage keeps detail counts only when the vendor reported a positive one", () => {
    assert.deepStrictEqual(makeUsage({ inputTokens: 10, outputTokens: 5 }), { inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    assert.deepStrictEqual(
      makeUsage({ inputTokens: 10, outputTokens: 5, totalTokens: 16, cachedInputTokens: 0, cacheWriteTokens: null, reasoningTokens: 3 }),
      { inputTokens: 10, outputTokens: 5, totalTokens: 16, reasoningTokens: 3 }
    )
  })

  it("addUsage sums every count; a detail one side lacks counts as 0", () => {
    const a = makeUsage({ inputTokens: 100, outputTokens: 10, cachedInputTokens: 80, reasoningTokens: 4 })
    const b = makeUsage({ inputTokens: 120, outputTokens: 7, cacheWriteTokens: 20 })
    assert.deepStrictEqual(addUsage(a, b), {
      inputTokens: 220,
      outputTokens: 17,
      totalTokens: 237,
      cachedInputTokens: 80,
      cacheWriteTokens: 20,
      reasoningTokens: 4
    })
    assert.strictEqual(addUsage(undefined, b), b)
    assert.strictEqual(addUsage(a, undefined), a)
    assert.isUndefined(addUsage(undefined, undefined))
  })
})
