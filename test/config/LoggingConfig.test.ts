import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect } from "effect"
import { afterEach, beforeEach, vi } from "vitest"
import { loggerLayer, logInfoWith } from "../../src/config/LoggingConfig"

/** What the loggers wrote to stderr, one entry per write. */
let writes: Array<string> = []

beforeEach(() => {
  writes = []
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    writes.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
    return true
  })
})
afterEach(() => {
  vi.restoreAllMocks()
})

const details = JSON.stringify({ args: { step: 3, query: "two words" } }, null, 2)

const logSomething = Effect.logError("tool failed: no_such_tool").pipe(
  Effect.annotateLogs({ channelId: "terminal", details, keyIndex: 0 }),
  Effect.withLogSpan("turn")
)

describe("LOG_FORMAT loggers (one write, one line per record)", () => {
  it.effect("pretty: level, fiber, message, annotations and spans on one line; a multi-line dump is folded", () =>
    Effect.gen(function*() {
      yield* logSomething
      assert.strictEqual(writes.length, 1, "one write per record")
      const line = writes[0]!
      assert.isTrue(line.endsWith("\n"))
      assert.notInclude(line.slice(0, -1), "\n", "a single line")
      assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR \(#\d+\): tool failed: no_such_tool /)
      assert.include(line, "channelId=terminal")
      assert.include(line, "keyIndex=0")
      assert.include(line, `details={ "args": { "step": 3, "query": "two words" } }`)
      assert.match(line, / turn=\d+ms/)
    }).pipe(Effect.provide(loggerLayer({ level: "Info", format: "pretty" }))))

  it.effect("pretty: a failure's cause follows the record line", () =>
    Effect.gen(function*() {
      yield* Effect.logWarning("recording failed", Cause.die(new Error("disk full")))
      assert.strictEqual(writes.length, 1)
      const [first, ...rest] = writes[0]!.trimEnd().split("\n")
      assert.include(first, "WARN")
      assert.include(first, "recording failed")
      assert.notInclude(first, "disk full")
      assert.include(rest.join("\n"), "disk full")
      // An error given as a message part stays on the record line.
      yield* Effect.logWarning("retrying", new Error("timeout"))
      assert.include(writes[1], "retrying Error: timeout")
    }).pipe(Effect.provide(loggerLayer({ level: "Info", format: "pretty" }))))

  it.effect("json: one compact JSON object per line with the jsonLogger fields", () =>
    Effect.gen(function*() {
      yield* logSomething
      assert.strictEqual(writes.length, 1)
      const line = writes[0]!
      assert.notInclude(line.slice(0, -1), "\n")
      const record = JSON.parse(line) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(record), ["message", "logLevel", "timestamp", "annotations", "spans", "fiberId"])
      assert.strictEqual(record["message"], "tool failed: no_such_tool")
      assert.strictEqual(record["logLevel"], "ERROR")
      const annotations = record["annotations"] as Record<string, unknown>
      assert.strictEqual(annotations["channelId"], "terminal")
      assert.strictEqual(annotations["keyIndex"], 0)
      assert.notInclude(String(annotations["details"]), "\n", "no multi-line dump inside a JSON line")
      assert.isNumber((record["spans"] as Record<string, unknown>)["turn"])
    }).pipe(Effect.provide(loggerLayer({ level: "Info", format: "json" }))))

  it.effect("json: a record logged inside a span carries its trace and span ids; outside a span, none", () =>
    Effect.gen(function*() {
      const span = yield* Effect.logInfo("in a span").pipe(Effect.andThen(Effect.currentSpan), Effect.withSpan("loopcord.turn"))
      yield* Effect.logInfo("outside")
      const inside = JSON.parse(writes[0]!) as Record<string, unknown>
      assert.deepStrictEqual([inside["traceId"], inside["spanId"]], [span.traceId, span.spanId])
      const outside = JSON.parse(writes[1]!) as Record<string, unknown>
      assert.isFalse("traceId" in outside)
    }).pipe(Effect.provide(loggerLayer({ level: "Info", format: "json" }))))

  it.effect("json: an annotation that cannot be serialised (a cycle) still gives one parseable line", () =>
    Effect.gen(function*() {
      const cyclic: Record<string, unknown> = { name: "loop" }
      cyclic["self"] = cyclic
      yield* Effect.logInfo("cyclic").pipe(Effect.annotateLogs({ cyclic }))
      assert.strictEqual(writes.length, 1)
      const record = JSON.parse(writes[0]!) as { readonly annotations: { readonly cyclic: { readonly name: string } } }
      assert.strictEqual(record.annotations.cyclic.name, "loop")
    }).pipe(Effect.provide(loggerLayer({ level: "Info", format: "json" }))))

  it.effect("below the level nothing is written", () =>
    Effect.gen(function*() {
      yield* Effect.logInfo("chatty")
      yield* Effect.logDebug("chattier")
      assert.deepStrictEqual(writes, [])
      yield* Effect.logWarning("loud")
      assert.strictEqual(writes.length, 1)
    }).pipe(Effect.provide(loggerLayer({ level: "Warn", format: "pretty" }))))

  it.effect("logInfoWith builds its annotations only when info is written", () =>
    Effect.gen(function*() {
      let built = 0
      const annotations = () => {
        built += 1
        return { status: "completed", iterations: 3 }
      }
      yield* logInfoWith("turn finished", annotations).pipe(Effect.provide(loggerLayer({ level: "Warn", format: "json" })))
      assert.strictEqual(built, 0, "below the level the annotations are never built")
      assert.deepStrictEqual(writes, [])
      yield* logInfoWith("turn finished", annotations).pipe(Effect.provide(loggerLayer({ level: "Info", format: "json" })))
      assert.strictEqual(built, 1)
      const record = JSON.parse(writes[0]!) as { readonly message: string; readonly annotations: Record<string, unknown> }
      assert.strictEqual(record.message, "turn finished")
      assert.deepStrictEqual(record.annotations, { status: "completed", iterations: 3 })
    }))
})
