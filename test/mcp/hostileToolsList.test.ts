import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type HostileMode, startHostileServer } from "../support/mcpServers/hostileServer"
import { startStreamableServer } from "../support/mcpServers/httpServers"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const MIB = 1024 * 1024
/** GUILD_MCP_CONNECT_TIMEOUT_MS default: discovery must end (kept or refused) within it. */
const CONNECT_TIMEOUT_MS = 15_000

interface Measured {
  readonly ok: boolean
  readonly detail: string
  readonly tools: number
  readonly names: ReadonlyArray<string>
  readonly longestDescription: number
  readonly elapsedMs: number
  readonly retainedHeapBytes: number
  readonly retainedExternalBytes: number
}

/**
 * Runs the real guild connector against a hostile server in a child process (node --expose-gc)
 * and reads what it retained. The hostile server lives here, so its memory is not counted.
 */
const measure = async (mode: HostileMode) => {
  const hostile = await startHostileServer(mode)
  const warmup = await startStreamableServer()
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--expose-gc", "--import", "tsx", "test/support/mcpServers/measureGuildConnect.ts", warmup.url, hostile.url],
        { cwd: root, timeout: 90_000, maxBuffer: 16 * MIB },
        (error, out, err) => (error === null ? resolve(out) : reject(new Error(`${error.message}\n${err.slice(-2000)}`)))
      )
    })
    const measured = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Measured
    return { measured, pages: hostile.pagesServed(), bytes: hostile.bytesServed() }
  } finally {
    await Promise.all([hostile.close(), warmup.close()])
  }
}

const withinBounds = (measured: Measured) => {
  assert.isBelow(measured.retainedHeapBytes, 5 * MIB, `retained heap ${measured.retainedHeapBytes} bytes`)
  assert.isBelow(measured.elapsedMs, CONNECT_TIMEOUT_MS)
}

describe("a hostile tools/list server (issue 12, decision 19): the connector stays under 5 MiB and resolves within the connect timeout", () => {
  it("pages of 7.6 MiB with an endless cursor: the first page is cut off at the 2 MiB control cap and the server refused", async () => {
    const { bytes, measured, pages } = await measure("hugePages")
    assert.isFalse(measured.ok)
    assert.include(measured.detail, "exceeds the maximum allowed size (2 MB)")
    assert.strictEqual(pages, 1)
    assert.isBelow(bytes, 7 * MIB, "the client hung up before the page was written out")
    withinBounds(measured)
  }, 120_000)

  it("a million tools in near-cap pages: 64 kept, reading stops at the cap", async () => {
    const { measured, pages } = await measure("nearCapPages")
    assert.isTrue(measured.ok, measured.detail)
    assert.strictEqual(measured.tools, 64)
    assert.strictEqual(measured.names[63], "many_0_63")
    assert.strictEqual(pages, 1, "no second page once 64 tools are kept")
    withinBounds(measured)
  }, 120_000)

  it("an endless cursor: five pages, then discovery stops", async () => {
    const { measured, pages } = await measure("endlessCursor")
    assert.isTrue(measured.ok, measured.detail)
    assert.deepStrictEqual(measured.names, ["endless_0", "endless_1", "endless_2", "endless_3", "endless_4"])
    assert.strictEqual(pages, 5)
    withinBounds(measured)
  }, 120_000)

  it("deep, huge and fat schemas and a huge name are skipped; a huge description is cut to 1024", async () => {
    const { measured } = await measure("schemas")
    assert.isTrue(measured.ok, measured.detail)
    assert.deepStrictEqual(measured.names, ["verbose", "ok_one", "flood"])
    assert.strictEqual(measured.longestDescription, 1024)
    withinBounds(measured)
  }, 120_000)
})
