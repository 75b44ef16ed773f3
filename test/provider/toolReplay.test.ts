import { assert, describe, it } from "vitest"
import type { ToolHistoryEntry } from "../../src/domain/ToolHistoryEntry"
import { callIdsOf, exchangesOf } from "../../src/provider/toolReplay"

const entry = (id: string | undefined, batch?: number, text?: string): ToolHistoryEntry => ({
  functionCall: { name: "ping", args: {}, ...(id === undefined ? {} : { id }) },
  functionResponse: { name: "ping", response: { result: "ok" } },
  ...(batch === undefined ? {} : { batch }),
  ...(text === undefined ? {} : { preToolCallTextParts: [{ type: "text", text }] })
})

describe("toolReplay: exchanges and call ids", () => {
  it("groups consecutive entries of one batch; the pre-tool text is the first entry's", () => {
    const exchanges = exchangesOf([entry("a", undefined, "alone"), entry("b", 7, "both"), entry("c", 7, "ignored"), entry("d", 8, "  ")])
    assert.deepStrictEqual(exchanges.map((exchange) => [exchange.ids, exchange.preToolText]), [
      [["a"], "alone"],
      [["b", "c"], "both"],
      [["d"], undefined]
    ])
  })

  it("keeps a provider's valid id; derives one from the position otherwise, never twice the same", () => {
    const history = [entry("call_ok"), entry(undefined), entry("has spaces"), entry("call_ok"), entry("x".repeat(65)), entry("p_2")]
    assert.deepStrictEqual(callIdsOf(history, "p_"), ["call_ok", "p_2", "p_3", "p_4", "p_5", "p_6"])
    // `p_2` given by the provider after the position derived it: derived again, with a suffix.
    assert.deepStrictEqual(callIdsOf([entry("p_2"), entry(undefined)], "p_"), ["p_2", "p_2_2"])
  })
})
