import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Sticker } from "../../../../src/domain/Sticker"
import { ToolCallOutcome } from "../../../../src/domain/ToolCallOutcome"
import { executeToolCall } from "../../../../src/loop/executeToolCall"
import {
  findSticker,
  makeSelectStickerTool,
  SELECT_STICKER
} from "../../../../src/tools/builtin/stickers/SelectStickerTool"
import { StickerCatalog } from "../../../../src/tools/StickerCatalog"
import { callInput, makeToolCallHarness, testAttempt } from "../../../support/tools/toolCallHarness"
import { assembled, availability, executeIn, toolContext } from "../blocking/toolTestKit"

const wave = Sticker({ id: "111", name: "Wave Hello" })
const cry = Sticker({ id: "222", name: "cry" })
const stickersByGuild: Readonly<Record<string, ReadonlyArray<Sticker>>> = { "guild-1": [wave, cry], "guild-empty": [] }

const catalog = Layer.succeed(StickerCatalog, {
  lookup: (guildId, stickerId) =>
    Effect.succeed(Option.fromNullishOr((stickersByGuild[guildId ?? ""] ?? []).find((sticker) => sticker.id === stickerId))),
  list: (guildId) => Effect.succeed(stickersByGuild[guildId] ?? [])
})

describe("select_sticker_for_response", () => {
  it.effect("assembly lists the guild's stickers in the description and as an enum", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      const variant = yield* assembled(tool, availability())
      assert.isNotNull(variant)
      assert.include(variant?.description ?? "", '"Wave Hello", "cry"')
      assert.deepStrictEqual(variant?.parameters.properties["sticker_name"], {
        type: "string",
        description: "The exact name of the sticker.",
        enum: ["Wave Hello", "cry"]
      })
      assert.deepStrictEqual(variant?.parameters.required, ["sticker_name"])
      assert.strictEqual(variant?.category, "discord")
    }).pipe(Effect.provide(catalog))
  )

  it.effect("hidden in DMs, in guilds without stickers, and with a catalog that cannot list", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      assert.isFalse(tool.isAvailableForContext?.(availability({ guildId: undefined })))
      assert.isNull(yield* assembled(tool, availability({ guildId: undefined })))
      assert.isNull(yield* assembled(tool, availability({ guildId: "guild-empty" })))
      const lookupOnly = yield* Effect.provide(makeSelectStickerTool, StickerCatalog.none)
      assert.isNull(yield* assembled(lookupOnly, availability()))
    }).pipe(Effect.provide(catalog))
  )

  it.effect("a hit returns data.sticker_id; names match without case or :colons:", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      const context = yield* toolContext()
      for (const name of ["Wave Hello", "  wave   hello ", ":WAVE HELLO:", "111"]) {
        const result = yield* executeIn(tool, { sticker_name: name }, context)
        assert.deepStrictEqual(result.data, { status: "sticker_selected", sticker_id: "111", sticker_name: "Wave Hello" }, name)
      }
    }).pipe(Effect.provide(catalog))
  )

  it.effect("a miss fails and tells the model which names exist", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      const miss = yield* executeIn(tool, { sticker_name: "dance" }, yield* toolContext())
      assert.isFalse(miss.success)
      assert.include(miss.message ?? "", '"Wave Hello", "cry"')
      const none = yield* executeIn(tool, { sticker_name: "dance" }, yield* toolContext({ guildId: "guild-empty" }))
      assert.include(none.message ?? "", "no stickers")
      const dm = yield* executeIn(tool, { sticker_name: "cry" }, yield* toolContext({ guildId: undefined, isDM: true }))
      assert.isFalse(dm.success)
    }).pipe(Effect.provide(catalog))
  )

  it.effect("declares its turn effect and runs one at a time in a pass", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      assert.strictEqual(tool.turnEffect, "StickerSelected")
      assert.isTrue(tool.sequential)
    }).pipe(Effect.provide(catalog))
  )

  it.effect("through executeToolCall: a hit becomes the sticker selection, a miss clears it (null)", () =>
    Effect.gen(function* () {
      const tool = yield* makeSelectStickerTool
      const h = yield* makeToolCallHarness({ tools: [tool], stickers: [wave, cry] })
      const pick = (name: string) =>
        h.run(executeToolCall({ ...callInput({ name: SELECT_STICKER, args: { sticker_name: name } }), iteration: 0, attempt: testAttempt }))
      const hit = yield* pick("cry")
      assert.isTrue(ToolCallOutcome.$is("History")(hit) && hit.success)
      assert.deepStrictEqual(ToolCallOutcome.$is("History")(hit) ? hit.stickerSelection : undefined, cry)
      const miss = yield* pick("nope")
      assert.strictEqual(ToolCallOutcome.$is("History")(miss) ? miss.stickerSelection : undefined, null)
    }).pipe(Effect.provide(catalog))
  )

  it("findSticker prefers the first sticker of a repeated name", () => {
    const twin = Sticker({ id: "333", name: "CRY" })
    assert.deepStrictEqual(findSticker([cry, twin], "cry"), cry)
    assert.isUndefined(findSticker([cry], "laugh"))
  })
})
