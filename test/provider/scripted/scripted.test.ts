import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, ConfigProvider, Effect, Exit, Fiber, Layer, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { GenerationRequest } from "../../../src/provider/GenerationRequest"
import { LanguageModel } from "../../../src/provider/LanguageModel"
import * as S from "../../../src/provider/scripted/Script"
import { echoPass, parseScript } from "../../../src/provider/scripted/ScriptJson"
import * as Scripted from "../../../src/provider/scripted/ScriptedModel"
import { ScriptedProbe } from "../../../src/provider/scripted/ScriptedProbe"

const request = (text = "hi", extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: "m",
  apiKey: undefined,
  system: "sys",
  messages: [{ role: "user", content: text }],
  tools: [],
  functionHistory: [],
  ...extra
})

const collect = (req: GenerationRequest = request()) =>
  Effect.flatMap(LanguageModel, (model) => Stream.runCollect(model.stream(req)))

const texts = (events: ReadonlyArray<ProviderEvent>) =>
  events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

describe("Scripted provider", () => {
  it.effect("replays passes in order and records every request", () =>
    Effect.gen(function*() {
      const first = yield* collect(request("one"))
      const second = yield* collect(request("two"))
      assert.deepStrictEqual(first, [ProviderEvent.TextDelta({ text: "a" }), ProviderEvent.Finish({ reason: "stop" })])
      assert.strictEqual(texts(second), "b")
      const probe = yield* ScriptedProbe
      assert.deepStrictEqual((yield* probe.requests).map((r) => r.messages[0]?.content), ["one", "two"])
      assert.deepStrictEqual((yield* probe.calls).map((call) => call.ending), ["completed", "completed"])
    }).pipe(Effect.provide(Scripted.layer({ script: [S.reply("a"), S.reply("b")] }))))

  it.effect("callTools scripts a pass of several calls at once, in order, after the pre-tool text", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* collect(), [
        ProviderEvent.TextDelta({ text: "Both." }),
        ProviderEvent.ToolCall({ call: { name: "get_time", args: {}, id: "c1" } }),
        ProviderEvent.ToolCall({ call: { name: "ping", args: { n: 1 } } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
    }).pipe(Effect.provide(Scripted.layer({ script: [S.callTools([{ name: "get_time", id: "c1" }, { name: "ping", args: { n: 1 } }], "Both.")] }))))

  it.effect("an exhausted script fails the pass with a ProviderError", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(collect())
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "script exhausted")
      assert.strictEqual((yield* (yield* ScriptedProbe).calls)[0]?.ending, "failed")
    }).pipe(Effect.provide(Scripted.layer({ script: [] }))))

  it.effect("delays run on the Clock; a hang lasts until interrupted, and the finalizer sees the interruption", () =>
    Effect.gen(function*() {
      const probe = yield* ScriptedProbe
      const fiber = yield* Effect.forkChild(collect())
      yield* probe.awaitCall(0)
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual((yield* probe.calls)[0]?.emitted, 0)
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* probe.calls)[0]?.emitted, 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* probe.awaitFinalized(0), "interrupted")
    }).pipe(Effect.provide(Scripted.layer({ script: [[S.sleep("10 seconds"), S.text("x"), S.hang]] }))))

  it.effect("a function script picks passes from the request (per model, per key)", () =>
    Effect.gen(function*() {
      assert.strictEqual(texts(yield* collect(request("q", { model: "big" }))), "big model")
      assert.strictEqual(texts(yield* collect(request("q", { model: "small" }))), "small model")
    }).pipe(Effect.provide(Scripted.layer({ script: ({ request: r }) => S.reply(`${r.model} model`) }))))

  it.effect("byModel: each model consumes its own passes in order, whatever the interleaving", () =>
    Effect.gen(function*() {
      assert.strictEqual(texts(yield* collect(request("q", { model: "author" }))), "author 1")
      assert.strictEqual(texts(yield* collect(request("q", { model: "reviewer" }))), "reviewer 1")
      assert.strictEqual(texts(yield* collect(request("q", { model: "author" }))), "author 2")
      const exhausted = yield* Effect.result(collect(request("q", { model: "reviewer" })))
      assert.isTrue(exhausted._tag === "Failure", "the reviewer's list has one pass")
    }).pipe(Effect.provide(Scripted.layer({
      script: S.byModel({ author: [S.reply("author 1"), S.reply("author 2")], reviewer: [S.reply("reviewer 1")] })
    }))))

  it("the built-in echo replies with the last user message, word by word, with usage", () => {
    const pass = echoPass({ index: 0, modelIndex: 0, request: request("how are you") })
    const events = pass.flatMap((step) => (step._tag === "Emit" ? [step.event] : []))
    assert.strictEqual(texts(events), "You said: how are you")
    assert.isAbove(events.filter((event) => event._tag === "TextDelta").length, 1)
    assert.isTrue(events.some((event) => event._tag === "Usage"))
  })
})

describe("LLM_SCRIPT (JSON scripts)", () => {
  it("parses steps, string shorthand and `then`", () => {
    const parsed = parseScript(JSON.stringify({
      passes: [
        [{ text: "a" }, { reasoning: "r" }, { toolCall: { name: "t", args: { x: 1 }, id: "c1" } }, { usage: { inputTokens: 1, outputTokens: 2 } }],
        "plain reply",
        [{ keepAlive: true }, { sleepMs: 5 }, { finish: "length" }, { error: { reason: "RateLimit", status: 429 } }, { hang: true }]
      ],
      then: "repeat"
    }))
    assert.isTrue(Result.isSuccess(parsed))
    if (Result.isFailure(parsed) || typeof parsed.success !== "function") return
    const script = parsed.success
    const pass = (index: number) => script({ index, modelIndex: index, request: request() })
    assert.strictEqual(pass(0)?.length, 4)
    assert.deepStrictEqual(pass(1), S.reply("plain reply"))
    assert.strictEqual(pass(2)?.length, 5)
    assert.deepStrictEqual(pass(7), pass(2), "repeat replays the last pass")
  })

  it("a bare array is the pass list and fails after its end; `echo` falls back to the echo reply", () => {
    const bare = parseScript("[\"x\"]")
    assert.isTrue(Result.isSuccess(bare) && typeof bare.success === "function" && bare.success({ index: 1, modelIndex: 1, request: request() }) === undefined)
    const echo = parseScript("{\"passes\":[],\"then\":\"echo\"}")
    assert.isTrue(Result.isSuccess(echo) && typeof echo.success === "function" && echo.success({ index: 0, modelIndex: 0, request: request() }) !== undefined)
  })

  it("bad scripts are one-line errors saying where", () => {
    for (const bad of ["{", "[[{\"txt\":\"a\"}]]", "[[{\"error\":{\"reason\":\"Nope\"}}]]", "{\"passes\":[],\"then\":\"loop\"}"]) {
      const parsed = parseScript(bad)
      assert.isTrue(Result.isFailure(parsed), bad)
      if (Result.isFailure(parsed)) assert.notInclude(parsed.failure, "\n")
    }
  })

  const withEnv = (env: Record<string, string>) =>
    ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

  it.effect("layerConfig: inline JSON", () =>
    Effect.gen(function*() {
      assert.strictEqual(texts(yield* collect()), "inline")
    }).pipe(Effect.provide(Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(withEnv({ LLM_SCRIPT: "[\"inline\"]" }))))))

  it.effect("layerConfig: a path to a JSON file", () => {
    const dir = mkdtempSync(join(tmpdir(), "loopcord-script-"))
    const file = join(dir, "script.json")
    writeFileSync(file, JSON.stringify(["from a file"]))
    return Effect.gen(function*() {
      assert.strictEqual(texts(yield* collect()), "from a file")
    }).pipe(Effect.provide(Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(withEnv({ LLM_SCRIPT: file })))))
  })

  it.effect("layerConfig: unset means the echo reply", () =>
    Effect.gen(function*() {
      assert.strictEqual(texts(yield* collect(request("ping"))), "You said: ping")
    }).pipe(Effect.provide(Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(withEnv({}))))))

  it.effect("layerConfig: a bad script or a missing file fails naming LLM_SCRIPT", () =>
    Effect.gen(function*() {
      for (const value of ["[[{\"nope\":1}]]", "/definitely/not/here.json"]) {
        const exit = yield* Effect.exit(Layer.build(Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer), Layer.provide(withEnv({ LLM_SCRIPT: value })))).pipe(Effect.scoped))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "LLM_SCRIPT")
      }
    }))
})
