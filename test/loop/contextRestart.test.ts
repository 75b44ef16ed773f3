import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { ChatMessage } from "../../src/domain/ChatMessage"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { annotateRecentMessages, handleEnhancedContextRestart, METADATA_ANNOTATED_ITEMS, METADATA_TAIL_DIRECTIVE } from "../../src/loop/contextRestart"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { constantTool, makeRecordingTool } from "../support/tools/testTools"
import { callInput, makeToolCallHarness, testAttempt, type ToolCallHarness } from "../support/tools/toolCallHarness"

const run = (h: ToolCallHarness, rawCall: unknown) =>
  h.run(executeToolCall({ ...callInput(rawCall), iteration: 0, attempt: testAttempt }))

const dialogue: ReadonlyArray<ChatMessage> = [
  ChatMessage({ role: "user", content: "look at this", name: "ana", messageId: "m1", createdAt: "2026-05-01T10:00:00Z" }),
  ChatMessage({ role: "assistant", content: "nice", name: "Loopcord", messageId: "m2" })
]

describe("context restart at the executeToolCall level (spec §2.6)", () => {
  it.effect("[44] context_restart_youtube: the item is appended, YouTube processing disabled, no history entry", () =>
    Effect.gen(function*() {
      const transcript = { role: "user", content: "[YouTube transcript] hello world" }
      const h = yield* makeToolCallHarness({
        tools: [constantTool("process_youtube_video", toolSuccess({ type: "context_restart_youtube", enhanced_context_item: transcript }))],
        contextItems: dialogue
      })
      const outcome = yield* run(h, { name: "process_youtube_video", args: { url: "https://youtu.be/x" } })
      assert.strictEqual(outcome._tag, "Restart")
      if (outcome._tag === "Restart") assert.strictEqual(outcome.functionName, "process_youtube_video")
      const items = yield* Ref.get(h.state.contextItems)
      assert.strictEqual(items.length, dialogue.length + 1)
      assert.deepStrictEqual(items.at(-1), ChatMessage({ role: "user", content: "[YouTube transcript] hello world" }))
      const flags = yield* Ref.get(h.state.flags)
      assert.isTrue(flags.disableYouTubeProcessing)
      assert.isFalse(flags.disableProfilePictureProcessing)
    }))

  it.effect("[45] context_restart_with_image takes the stashed item once; replaying the key injects nothing", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ contextItems: dialogue })
      const image = { role: "user" as const, content: "ana's avatar", images: [{ url: "https://cdn.example/ana.png", mimeType: "image/png" }] }
      const key = yield* h.stash.put(image)
      yield* h.registry.register(
        constantTool("show_profile_picture", toolSuccess({ type: "context_restart_with_image", pending_context_key: key }))
      )
      const first = yield* run(h, { name: "show_profile_picture" })
      assert.strictEqual(first._tag, "Restart")
      const afterFirst = yield* Ref.get(h.state.contextItems)
      assert.strictEqual(afterFirst.length, dialogue.length + 1)
      assert.deepStrictEqual(afterFirst.at(-1), ChatMessage(image))
      assert.isTrue((yield* Ref.get(h.state.flags)).disableProfilePictureProcessing)
      // The same key again: still a restart, but the consumed payload is gone.
      const second = yield* run(h, { name: "show_profile_picture" })
      assert.strictEqual(second._tag, "Restart")
      assert.strictEqual((yield* Ref.get(h.state.contextItems)).length, dialogue.length + 1)
      const [warning] = yield* h.logs.matching("missing or expired")
      assert.strictEqual(warning?.level, "WARN")
    }))

  it.effect("[46] context_restart_message_metadata annotates recent messages, appends the tail directive, disables repeats", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("reveal_message_metadata", toolSuccess({ type: "context_restart_message_metadata" }))],
        contextItems: dialogue
      })
      assert.strictEqual((yield* run(h, { name: "reveal_message_metadata" }))._tag, "Restart")
      const items = yield* Ref.get(h.state.contextItems)
      assert.strictEqual(items.length, dialogue.length + 1)
      assert.include(items[0]!.content, "message_id: m1")
      assert.include(items[0]!.content, "author: ana")
      assert.include(items[0]!.content, "sent: 2026-05-01T10:00:00Z")
      assert.isTrue(items[0]!.content.endsWith("look at this"))
      assert.include(items[1]!.content, "message_id: m2")
      assert.deepStrictEqual(items.at(-1), ChatMessage({ role: "system", content: METADATA_TAIL_DIRECTIVE }))
      assert.include(METADATA_TAIL_DIRECTIVE, "reveal_message_metadata")
      assert.isTrue((yield* Ref.get(h.state.flags)).disableMessageMetadataContext)
    }))

  it.effect("[47] a failed result with a restart type is an ordinary failed history entry", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("process_youtube_video", toolFailure("no transcript", { data: { type: "context_restart_youtube", enhanced_context_item: { text: "x" } } }))],
        contextItems: dialogue
      })
      const outcome = yield* run(h, { name: "process_youtube_video" })
      assert.strictEqual(outcome._tag, "History")
      if (outcome._tag === "History") assert.strictEqual(outcome.success, false)
      assert.strictEqual((yield* Ref.get(h.state.contextItems)).length, dialogue.length)
      assert.isFalse((yield* Ref.get(h.state.flags)).disableYouTubeProcessing)
    }))

  it.effect("[2.6][3 step 8] a restart is a successful call: its duration on the Clock is kept and usage stats are recorded", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("gif_tool", () =>
        Effect.as(Effect.sleep("3 seconds"), toolSuccess({ type: "context_restart_gif", enhanced_context_item: { text: "gif frames" } })))
      const h = yield* makeToolCallHarness({ tools: [tool.tool] })
      const fiber = yield* Effect.forkChild(run(h, { name: "gif_tool" }))
      yield* TestClock.adjust("3 seconds")
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome._tag === "Restart" ? outcome.durationMs : -1, 3_000)
      assert.deepStrictEqual(yield* h.stats.next, { toolName: "gif_tool", guildId: "guild-1" })
      assert.isTrue((yield* Ref.get(h.state.flags)).disableGifProcessing)
      assert.deepStrictEqual((yield* Ref.get(h.state.contextItems)).at(-1), ChatMessage({ role: "system", content: "gif frames" }))
    }))
})

describe("handleEnhancedContextRestart (unit)", () => {
  const restart = (h: ToolCallHarness, data: unknown) => h.run(handleEnhancedContextRestart(data))

  it.effect("anything that is not a context_restart_* object is not a restart", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ contextItems: dialogue })
      for (const data of [undefined, null, "context_restart_youtube", { type: "youtube" }, { type: 7 }, [{ type: "context_restart_x" }]]) {
        assert.isFalse(yield* restart(h, data))
      }
      assert.strictEqual((yield* Ref.get(h.state.contextItems)).length, dialogue.length)
    }))

  it.effect("a restart without a payload object still restarts and sets flags, appending nothing", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ contextItems: dialogue })
      assert.isTrue(yield* restart(h, { type: "context_restart_youtube", enhanced_context_item: "just a string" }))
      assert.strictEqual((yield* Ref.get(h.state.contextItems)).length, dialogue.length)
      assert.isTrue((yield* Ref.get(h.state.flags)).disableYouTubeProcessing)
    }))

  it.effect("payload shapes: a ChatMessage keeps its role and images, text becomes a system item, other objects their JSON", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness()
      yield* restart(h, { type: "context_restart_x", enhanced_context_item: { role: "user", content: "pic", images: [{ url: "https://a/b.png" }] } })
      yield* restart(h, { type: "context_restart_x", enhanced_context_item: { text: "plain text" } })
      yield* restart(h, { type: "context_restart_x", enhanced_context_item: { facts: [1, 2] } })
      assert.deepStrictEqual(yield* Ref.get(h.state.contextItems), [
        ChatMessage({ role: "user", content: "pic", images: [{ url: "https://a/b.png" }] }),
        ChatMessage({ role: "system", content: "plain text" }),
        ChatMessage({ role: "system", content: "{\"facts\":[1,2]}" })
      ])
    }))

  it.effect("a missing stash key falls back to the inline item with a warning", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness()
      assert.isTrue(yield* restart(h, { type: "context_restart_with_image", pending_context_key: "nope", enhanced_context_item: { text: "inline" } }))
      assert.deepStrictEqual(yield* Ref.get(h.state.contextItems), [ChatMessage({ role: "system", content: "inline" })])
      assert.strictEqual((yield* h.logs.matching("Pending context 'nope'"))[0]?.level, "WARN")
    }))

  it("annotation covers only the most recent items, skips system items and is idempotent", () => {
    const many = Array.from({ length: METADATA_ANNOTATED_ITEMS + 5 }, (_, i) =>
      ChatMessage({ role: i === METADATA_ANNOTATED_ITEMS + 4 ? "system" : "user", content: `m${i}`, messageId: `id${i}` }))
    const once = annotateRecentMessages(many)
    assert.strictEqual(once[0]!.content, "m0")
    assert.strictEqual(once[4]!.content, "m4")
    assert.include(once[5]!.content, "message_id: id5")
    assert.strictEqual(once.at(-1)!.content, `m${METADATA_ANNOTATED_ITEMS + 4}`)
    assert.deepStrictEqual(annotateRecentMessages(once), once)
  })
})
