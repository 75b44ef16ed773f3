import { assert, describe, it } from "@effect/vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { runCli } from "./cliProcess"

describe("--once --json: what the model reads of a failed tool is a class; the log keeps the rest", () => {
  it("[issue 25] fetch_url of a loopback page in production: the replayed reason word for word, the address only on stderr", async () => {
    const page = createServer((_request, response) => response.end("internal admin page"))
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/admin`
    const script = JSON.stringify({
      passes: [[{ toolCall: { name: "fetch_url", args: { url }, id: "call_1" } }], [{ text: "I could not read it." }, { finish: "stop" }]]
    })
    const run = await runCli(["--once", "read the admin page", "--json"], { LLM_PROVIDER: "scripted", LLM_SCRIPT: script })
      .finally(() => new Promise<void>((resolve) => page.close(() => resolve())))
    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim())
    assert.deepStrictEqual(report.toolCalls[0].response, {
      status: "tool_execution_failed",
      reason: `Could not fetch ${url}: blocked: a private address. Tell the user the page could not be read; do not invent its content.`,
      tool_name: "fetch_url"
    })
    // The thought log (logged in the terminal) keeps what happened in full.
    assert.include(run.stderr, "address 127.0.0.1 is loopback")
    assert.include(run.stderr, "FETCH_URL_ALLOW_PRIVATE_NETWORK=true")
  }, 60_000)
})
