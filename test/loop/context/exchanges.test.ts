import { assert, describe, it } from "vitest"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import { budgetRequest } from "../../../src/loop/context/budget"
import { exchangesOf } from "../../../src/loop/context/exchanges"
import type { GenerationRequest } from "../../../src/provider/GenerationRequest"

const entry = (id: string, batch: number | undefined, result = "ok"): ToolHistoryEntry => ({
  functionCall: { name: "fetch_url", args: { url: `https://example.com/${id}` }, id },
  functionResponse: { name: "fetch_url", response: { result } },
  ...(batch === undefined ? {} : { batch })
})

const idsOf = (exchanges: ReturnType<typeof exchangesOf>) => exchanges.map((exchange) => exchange.entries.map((e) => e.functionCall.id))

describe("exchanges: the calls of one pass are one exchange", () => {
  it("consecutive entries of one batch are one exchange; an entry without a batch is its own", () => {
    const history = [entry("a", undefined), entry("b", undefined), entry("c", 3), entry("d", 3), entry("e", 3), entry("f", 4), entry("g", 5), entry("h", 5)]
    assert.deepStrictEqual(idsOf(exchangesOf(history)), [["a"], ["b"], ["c", "d", "e"], ["f"], ["g", "h"]])
  })

  it("the same batch number apart is two exchanges (only consecutive entries were made together)", () => {
    assert.deepStrictEqual(idsOf(exchangesOf([entry("a", 1), entry("b", 2), entry("c", 1)])), [["a"], ["b"], ["c"]])
  })

  it("the budget never splits a batch: the calls of a pass are kept or left out together", () => {
    const page = (seed: string) => `${seed} `.repeat(6_000)
    const history = Array.from({ length: 12 }, (_, pass) => [entry(`a${pass}`, pass, page(`a${pass}`)), entry(`b${pass}`, pass, page(`b${pass}`))]).flat()
    const request: GenerationRequest = {
      model: "m",
      apiKey: undefined,
      system: "You are a careful research assistant.",
      messages: [{ role: "user", content: "What do the pages say?" }],
      tools: [],
      functionHistory: history
    }
    const outcome = budgetRequest({ request, exchanges: exchangesOf(history), question: 0, limit: 6_000, compaction: "elide" })
    const kept = outcome.request.functionHistory.map((e) => e.functionCall.id!)
    assert.isAbove(outcome.droppedExchanges.length, 0, "the limit forces exchanges out")
    for (let pass = 0; pass < 12; pass++) assert.strictEqual(kept.includes(`a${pass}`), kept.includes(`b${pass}`), `pass ${pass}`)
    assert.deepStrictEqual(kept.slice(-2), ["a11", "b11"], "the newest pass stays whole")
    // Left out whole, oldest first: every dropped exchange holds both calls of its pass.
    for (const dropped of outcome.droppedExchanges) assert.strictEqual(dropped.entries.length, 2)
  })
})
