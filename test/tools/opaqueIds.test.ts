import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { locatorOf, MediaLibrary } from "../../src/media/MediaLibrary"
import { OpaqueIds } from "../../src/tools/OpaqueIds"
import { makeRecordingTool } from "../support/tools/testTools"
import { call, callInput, makeToolCallHarness, testAttempt } from "../support/tools/toolCallHarness"
import { pixelPng } from "../support/mediaFixtures"

const mediaServices = Layer.provideMerge(MediaLibrary.opaqueIds, MediaLibrary.Default)

describe("opaque media ids (spec §3 step 6, issue 13)", () => {
  it.effect("a known media_id reaches the tool as its source, the id kept as __original_media_id; the model's call is replayed unchanged", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const remote = yield* library.register({ _tag: "Remote", url: "https://cdn.example/attachments/1/cat.png" })
      const stored = yield* library.register({ _tag: "Stored", bytes: pixelPng(), mimeType: "image/png", filename: "pixel.png" })
      assert.match(remote.id, /^img_[a-z2-7]{8}$/)
      const tool = yield* makeRecordingTool("look", () => Effect.succeed(toolSuccess({ ok: true })))
      const h = yield* makeToolCallHarness({ tools: [tool.tool], opaqueIds: yield* OpaqueIds })
      const outcome = yield* h.run(executeToolCall({ ...callInput({ name: "look", args: { media_id: remote.id, note: "x" } }), iteration: 0, attempt: testAttempt }))
      yield* h.run(executeToolCall({ ...callInput({ name: "look", args: { media_id: ` ${stored.id} ` } }), iteration: 0, attempt: testAttempt }))
      const calls = (yield* Ref.get(tool.calls)).map((recorded) => recorded.args)
      assert.deepStrictEqual(calls, [
        { media_id: "https://cdn.example/attachments/1/cat.png", __original_media_id: remote.id, note: "x" },
        { media_id: `media:${stored.id}`, __original_media_id: stored.id }
      ])
      assert.strictEqual(locatorOf(stored), `media:${stored.id}`)
      if (outcome._tag !== "History") throw new Error("expected a history entry")
      assert.deepStrictEqual(outcome.historyEntry.functionCall, call("look", { media_id: remote.id, note: "x" }), "no __original_* and no URL is replayed")
      const [record] = yield* h.registry.executionHistory()
      assert.deepStrictEqual(record?.args, { media_id: ` ${stored.id} ` }, "the history keeps the model's arguments")
    }).pipe(Effect.provide(mediaServices)))

  it.effect("an unknown id, a URL or a forged __original_* is a clear failure or dropped; the tool never runs on a guess", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("look")
      const h = yield* makeToolCallHarness({ tools: [tool.tool], opaqueIds: yield* OpaqueIds })
      const runCall = (args: Record<string, unknown>) =>
        h.run(executeToolCall({ ...callInput({ name: "look", args }), iteration: 0, attempt: testAttempt }))
      for (const media_id of ["img_aaaaaaaa", "https://evil.example/x.png", "media:img_aaaaaaaa"]) {
        const outcome = yield* runCall({ media_id })
        if (outcome._tag !== "History") throw new Error("expected a history entry")
        assert.isFalse(outcome.success, media_id)
        const result = outcome.historyEntry.functionResponse.response.result as { reason: string }
        assert.include(result.reason, `Unknown media_id "${media_id}"`)
      }
      assert.lengthOf(yield* Ref.get(tool.calls), 0)
      yield* runCall({ __original_media_id: "img_forged00", text: "hi" })
      assert.deepStrictEqual((yield* Ref.get(tool.calls)).map((recorded) => recorded.args), [{ text: "hi" }])
    }).pipe(Effect.provide(mediaServices)))

  it.effect("MCP tools get their arguments as written; ids are stable per source and bounded by the library", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const mcp = yield* makeRecordingTool("mcp_look", undefined, { source: { kind: "mcp", scope: "global", server: "s" } })
      const h = yield* makeToolCallHarness({ tools: [mcp.tool], opaqueIds: yield* OpaqueIds })
      yield* h.run(executeToolCall({ ...callInput({ name: "mcp_look", args: { media_id: "their-own-id" } }), iteration: 0, attempt: testAttempt }))
      assert.deepStrictEqual((yield* Ref.get(mcp.calls)).map((recorded) => recorded.args), [{ media_id: "their-own-id" }])
      const first = yield* library.register({ _tag: "Remote", url: "https://cdn.example/a.png" })
      const again = yield* library.register({ _tag: "Remote", url: "https://cdn.example/a.png" })
      const other = yield* library.register({ _tag: "Remote", url: "https://cdn.example/b.png" })
      assert.strictEqual(first.id, again.id)
      assert.notStrictEqual(first.id, other.id)
      const audio = yield* library.register({ _tag: "Stored", bytes: new Uint8Array([1]), mimeType: "audio/ogg", filename: "v.ogg" }, "audio")
      assert.match(audio.id, /^aud_/)
      for (let index = 0; index < 1100; index++) yield* library.register({ _tag: "Remote", url: `https://cdn.example/${index}.png` })
      assert.isTrue(Option.isNone(yield* library.lookup(first.id)), "the least recently used entries are evicted past 1024")
      assert.isTrue(Option.isSome(yield* library.lookup((yield* library.register({ _tag: "Remote", url: "https://cdn.example/1099.png" })).id)))
    }).pipe(Effect.provide(mediaServices)))
})
