import { assert, describe, it } from "@effect/vitest"
import { cacheDelete, cacheGet, cacheKeys, cacheSet, emptyCache } from "../../src/discord/boundedCache"
import { boundBuckets } from "../../src/discord/RateLimitGauge"

describe("bounded per-channel maps of the Discord front (issue 11)", () => {
  it("an entry lives ttl after it was last set; beyond maxEntries the one set longest ago is dropped", () => {
    const bounds = { ttlMs: 1000, maxEntries: 3 }
    let cache = emptyCache<string>()
    cache = cacheSet(cache, "a", "A", 0, bounds)
    cache = cacheSet(cache, "b", "B", 100, bounds)
    assert.strictEqual(cacheGet(cache, "a", 999), "A")
    assert.strictEqual(cacheGet(cache, "a", 1000), undefined)
    // Setting again renews the entry (and moves it to the back).
    cache = cacheSet(cache, "a", "A2", 500, bounds)
    cache = cacheSet(cache, "c", "C", 600, bounds)
    cache = cacheSet(cache, "d", "D", 700, bounds)
    assert.deepStrictEqual([...cache.keys()], ["a", "c", "d"])
    assert.strictEqual(cacheGet(cache, "a", 1400), "A2")
    // Expired entries are dropped by the next set, whatever the size.
    cache = cacheSet(cache, "e", "E", 1650, bounds)
    assert.deepStrictEqual([...cache.keys()], ["d", "e"])
    assert.deepStrictEqual([...cacheKeys(cache, 1701)], ["e"])
    assert.deepStrictEqual([...cacheDelete(cache, "e").keys()], ["d"])
  })

  it("10 000 channels' worth of sets keeps at most maxEntries", () => {
    const bounds = { ttlMs: 60_000, maxEntries: 100 }
    let cache = emptyCache<number>()
    for (let i = 0; i < 10_000; i++) cache = cacheSet(cache, `channel-${i}`, i, i, bounds)
    assert.strictEqual(cache.size, 100)
    assert.strictEqual(cacheGet(cache, "channel-9999", 10_000), 9999)
    assert.strictEqual(cacheGet(cache, "channel-0", 10_000), undefined)
  })

  it("the rate-limit gauge forgets buckets that refilled and keeps at most its maximum", () => {
    const buckets = new Map([["c1", 100], ["c2", 300], ["c3", 500]])
    assert.deepStrictEqual([...boundBuckets(new Map(buckets), 300).keys()], ["c3"])
    assert.deepStrictEqual([...boundBuckets(new Map(buckets), 0, 2).keys()], ["c2", "c3"])
  })
})
