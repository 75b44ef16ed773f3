import { assert, describe, it } from "@effect/vitest"
import { abortableFetch, withRequestSignal } from "../../src/mcp/requestSignal"

/** A fetch that records the signal each request was given. */
const recordingFetch = () => {
  const seen: Array<{ readonly method: string; readonly signal: AbortSignal | null | undefined }> = []
  const fetch = async (_url: string | URL, init?: RequestInit) => {
    seen.push({ method: init?.method ?? "GET", signal: init?.signal })
    return new Response("{}")
  }
  return { fetch, seen }
}

const toolCall = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x" } }) }
const cancelled = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } }) }

describe("abortableFetch", () => {
  it("joins the call's signal to the tools/call POST made inside withRequestSignal", async () => {
    const { fetch, seen } = recordingFetch()
    const controller = new AbortController()
    await withRequestSignal(controller.signal, async () => {
      await Promise.resolve()
      await abortableFetch(fetch)("http://127.0.0.1/mcp", toolCall)
    })
    assert.strictEqual(seen[0]?.signal?.aborted, false)
    controller.abort()
    assert.strictEqual(seen[0]?.signal?.aborted, true)
  })

  it("leaves streams, notifications and requests outside a call alone", async () => {
    const { fetch, seen } = recordingFetch()
    const controller = new AbortController()
    await withRequestSignal(controller.signal, async () => {
      await abortableFetch(fetch)("http://127.0.0.1/mcp", { method: "GET" })
      await abortableFetch(fetch)("http://127.0.0.1/mcp", cancelled)
    })
    await abortableFetch(fetch)("http://127.0.0.1/mcp", toolCall)
    controller.abort()
    assert.deepStrictEqual(seen.map((entry) => entry.signal?.aborted ?? "none"), ["none", "none", "none"])
  })
})
