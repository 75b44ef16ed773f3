/**
 * Connects loopcord's guild MCP connector to one server and reports the heap it retains, for
 * the hostile-server test (`node --expose-gc --import tsx measureGuildConnect.ts WARMUP_URL URL`).
 * Runs in a child process so the hostile server's own memory (in the parent) is not counted.
 * A first connect to a well-behaved server (WARMUP_URL) loads and initializes everything that
 * is loaded once per process (SDK, zod, undici), so the figure is what the hostile server costs.
 *
 * Prints one JSON line: `{ ok, detail, tools, descriptions, elapsedMs, retainedHeapBytes,
 * retainedExternalBytes }`; the heap figures are `process.memoryUsage()` deltas after forced
 * GCs, taken with the session still referenced.
 */
import { Effect, Result, Layer } from "effect"
import { GuildMcpPool } from "../../../src/mcp/GuildMcpPool"
import { guildMcpLayer, guildServer } from "./mcpTestKit"

const url = process.argv[process.argv.length - 1] ?? ""
const warmupUrl = process.argv[process.argv.length - 2] ?? ""
const collect = (globalThis as { gc?: () => void }).gc
if (collect === undefined) throw new Error("run node with --expose-gc")

/** Several GCs with event-loop turns between them, so finalizers and weak refs settle. */
const settle = async (): Promise<NodeJS.MemoryUsage> => {
  for (let round = 0; round < 6; round++) {
    collect()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return process.memoryUsage()
}

const program = Effect.gen(function*() {
  const context = yield* Layer.build(guildMcpLayer().layer)
  const pool = yield* Effect.provide(GuildMcpPool, context)
  yield* pool.session(guildServer({ name: "warmup", url: warmupUrl }))
  yield* pool.disconnect("guild-1", "warmup")
  const before = yield* Effect.promise(settle)
  const started = performance.now()
  const outcome = yield* Effect.result(pool.session(guildServer({ url })))
  const elapsedMs = Math.round(performance.now() - started)
  const after = yield* Effect.promise(settle)
  const session = Result.getOrUndefined(outcome)
  return {
    ok: Result.isSuccess(outcome),
    detail: Result.isFailure(outcome) ? outcome.failure.message.slice(0, 300) : "",
    tools: session?.tools.length ?? 0,
    names: session?.tools.map((tool) => tool.mcpName) ?? [],
    longestDescription: Math.max(0, ...(session?.tools.map((tool) => tool.description.length) ?? [])),
    elapsedMs,
    retainedHeapBytes: after.heapUsed - before.heapUsed,
    retainedExternalBytes: after.external - before.external
  }
})

Effect.runPromiseExit(Effect.scoped(program)).then((exit) => {
  if (exit._tag === "Failure") {
    console.error(String(exit.cause))
    process.exit(1)
  }
  process.stdout.write(`${JSON.stringify(exit.value)}\n`)
  process.exit(0)
})
