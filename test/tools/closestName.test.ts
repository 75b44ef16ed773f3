import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { closestName, levenshtein } from "../../src/tools/closestName"

describe("closest tool name (spec §6.1, scenario 77)", () => {
  it("levenshtein counts insertions, deletions and substitutions", () => {
    assert.strictEqual(levenshtein("", ""), 0)
    assert.strictEqual(levenshtein("abc", ""), 3)
    assert.strictEqual(levenshtein("kitten", "sitting"), 3)
    assert.strictEqual(levenshtein("web_serch", "web_search"), 1)
  })

  it("levenshtein is a metric (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b, c) => {
        assert.strictEqual(levenshtein(a, a), 0)
        assert.strictEqual(levenshtein(a, b), levenshtein(b, a))
        assert.isAtMost(levenshtein(a, c), levenshtein(a, b) + levenshtein(b, c))
        assert.isAtMost(levenshtein(a, b), Math.max(a.length, b.length))
      })
    )
  })

  it("[77] suggests the nearest reasonably close name, case-insensitively", () => {
    const tools = ["web_search", "fetch_url", "create_long_term_memory"]
    assert.strictEqual(closestName("web_serch", tools), "web_search")
    assert.strictEqual(closestName("FETCH_URL", tools), "fetch_url")
    assert.strictEqual(closestName("fetchurl", tools), "fetch_url")
    assert.strictEqual(closestName("create_longterm_memory", tools), "create_long_term_memory")
    assert.strictEqual(closestName("ping", tools), undefined)
    assert.strictEqual(closestName("anything", []), undefined)
  })
})
