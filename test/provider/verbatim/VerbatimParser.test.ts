import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, Stream } from "effect"
import fc from "fast-check"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { ToolDeclaration } from "../../../src/domain/ToolDeclaration"
import { type VerbatimOutput, VerbatimParser, verbatimToolsFrom } from "../../../src/provider/verbatim/VerbatimParser"
import { maxCallsPerPass } from "../../../src/provider/toolArguments"
import { parseVerbatimToolCalls } from "../../../src/provider/verbatim/verbatimToolCalling"

const tools: ReadonlyArray<ToolDeclaration> = [
  {
    name: "read_file",
    description: "Read a media file",
    parameters: { type: "object", properties: { media_id: { type: "string" } }, required: ["media_id"] }
  },
  {
    name: "generate_image",
    description: "Make art",
    parameters: {
      type: "object",
      properties: { prompt: { type: "string" }, mode: { type: "string" } },
      required: ["prompt", "mode"]
    }
  },
  { name: "ping", description: "No arguments", parameters: { type: "object", properties: {} } },
  {
    name: "read_file_v2",
    description: "A longer name sharing a prefix",
    parameters: { type: "object", properties: { id: { type: "number" } }, required: ["id"] }
  }
]

const run = (chunks: ReadonlyArray<string>, maxBufferChars = 8192) => {
  const parser = new VerbatimParser(verbatimToolsFrom(tools), maxBufferChars)
  const out: Array<VerbatimOutput> = []
  const visibleAfterEachFeed: Array<string> = []
  for (const chunk of chunks) {
    parser.feed(chunk, out)
    visibleAfterEachFeed.push(out.flatMap((output) => (output._tag === "Prose" ? [output.text] : [])).join(""))
  }
  parser.flush(out)
  const prose = out.flatMap((output) => (output._tag === "Prose" ? [output.text] : [])).join("")
  const calls = out.flatMap((output) => (output._tag === "Call" ? [output.call] : []))
  return { prose, calls, out, visibleAfterEachFeed }
}

describe("VerbatimParser", () => {
  it("[106] a code span split inside the tool name is one call and no visible text", () => {
    const result = run(["`read", "_file(\"media_1\")`"])
    assert.deepStrictEqual(result.calls, [{ name: "read_file", args: { media_id: "media_1" } }])
    assert.strictEqual(result.prose, "")
    // Nothing was shown before the call was recognized: the opener and partial name were held.
    assert.deepStrictEqual(result.visibleAfterEachFeed, ["", ""])
  })

  it("[107] a fenced json block is one call with the JSON args", () => {
    const result = run(["```json\ngenerate_image({\"prompt\":\"a fox\",\"mode\":\"txt2img\"})\n```"])
    assert.deepStrictEqual(result.calls, [{ name: "generate_image", args: { prompt: "a fox", mode: "txt2img" } }])
    assert.strictEqual(result.prose, "")
  })

  it("[108] prose before the call is emitted first, then the call", () => {
    const result = run(["I should use a tool: `read_file(\"media_1\")`"])
    assert.strictEqual(result.prose, "I should use a tool: ")
    assert.deepStrictEqual(result.calls, [{ name: "read_file", args: { media_id: "media_1" } }])
    assert.deepStrictEqual(result.out.map((output) => output._tag), ["Prose", "Call"])
  })

  it("[109] a bare string for a tool with two required params is not a call", () => {
    const result = run(["`generate_image(\"portrait\")`"])
    assert.deepStrictEqual(result.calls, [])
    assert.strictEqual(result.prose, "`generate_image(\"portrait\")`")
  })

  it("[110] a tool name in prose with parentheses is text", () => {
    const text = "You could use generate_image (it makes art) yourself."
    const result = run([text])
    assert.deepStrictEqual(result.calls, [])
    assert.strictEqual(result.prose, text)
  })

  it("[111] parentheses inside strings do not close the call", () => {
    const result = run(["generate_image({\"prompt\":\"a cat (very cute) :)\",\"mode\":\"txt2img\"})"])
    assert.deepStrictEqual(result.calls, [{ name: "generate_image", args: { prompt: "a cat (very cute) :)", mode: "txt2img" } }])
  })

  it("[112] an unbalanced call at stream end is released as visible text", () => {
    const result = run(["`read_file(\"media_1\"`"])
    assert.deepStrictEqual(result.calls, [])
    assert.strictEqual(result.prose, "`read_file(\"media_1\"`")
  })

  it("[113] an unknown tool is emitted as text", () => {
    const result = run(["unknown_tool({\"x\":1})"])
    assert.deepStrictEqual(result.calls, [])
    assert.strictEqual(result.prose, "unknown_tool({\"x\":1})")
  })

  it("name() only when nothing is required; escaped quotes are handled", () => {
    assert.deepStrictEqual(run(["ping()"]).calls, [{ name: "ping", args: {} }])
    assert.deepStrictEqual(run(["read_file()"]).calls, [])
    assert.deepStrictEqual(run(["read_file(\"a \\\" ) b\")"]).calls, [{ name: "read_file", args: { media_id: "a \" ) b" } }])
  })

  it("prefers the longest tool name and needs a word boundary before it", () => {
    assert.deepStrictEqual(run(["read_file_v2({\"id\":3})"]).calls, [{ name: "read_file_v2", args: { id: 3 } }])
    const glued = run(["xread_file(\"a\")"])
    assert.deepStrictEqual(glued.calls, [])
    assert.strictEqual(glued.prose, "xread_file(\"a\")")
  })

  it("text after the call is never shown", () => {
    const result = run(["`ping()` and then more", " text"])
    assert.deepStrictEqual(result.calls, [{ name: "ping", args: {} }])
    assert.strictEqual(result.prose, "")
  })

  it("releases prose as soon as it cannot become a call", () => {
    const result = run(["Hello the", "re, rea", "dy?"])
    assert.deepStrictEqual(result.visibleAfterEachFeed, ["Hello the", "Hello there, ", "Hello there, ready?"])
  })

  it("a held call longer than the buffer cap is released as prose", () => {
    const long = `read_file("${"x".repeat(300)}")`
    const result = run([long.slice(0, 100), long.slice(100)], 128)
    assert.deepStrictEqual(result.calls, [])
    assert.strictEqual(result.prose, long)
    assert.isTrue(result.visibleAfterEachFeed[1]!.length > 0)
  })

  it("a rejected candidate is emitted and scanning resumes", () => {
    const result = run(["Use read_file (on media) like `read_file(\"m2\")`"])
    assert.strictEqual(result.prose, "Use read_file (on media) like ")
    assert.deepStrictEqual(result.calls, [{ name: "read_file", args: { media_id: "m2" } }])
  })

  it("a fenced block of other code is prose", () => {
    const text = "```python\nprint(read_file)\n```\nDone."
    const result = run([text])
    assert.strictEqual(result.prose, text)
  })

  it("several calls written one after another are each a call, in order; prose after the first is never shown", () => {
    const text = "Both: `read_file(\"m1\")`\nthen\n```json\ngenerate_image({\"prompt\":\"a fox\",\"mode\":\"m\"})\n```\nping() and done."
    const whole = run([text])
    assert.strictEqual(whole.prose, "Both: ")
    assert.deepStrictEqual(whole.calls, [
      { name: "read_file", args: { media_id: "m1" } },
      { name: "generate_image", args: { prompt: "a fox", mode: "m" } },
      { name: "ping", args: {} }
    ])
    // Cut at every character, the same calls and the same prose.
    const byChar = run([...text])
    assert.deepStrictEqual(byChar.calls, whole.calls)
    assert.strictEqual(byChar.prose, "Both: ")
  })

  it("a broken call after the first is dropped with the prose; a word ending in a tool name is no call", () => {
    const result = run(["`read_file(\"m1\")` read_file({bad}) myread_file(\"m3\") read_file(\"m2\")"])
    assert.deepStrictEqual(result.calls, [{ name: "read_file", args: { media_id: "m1" } }, { name: "read_file", args: { media_id: "m2" } }])
    assert.strictEqual(result.prose, "")
  })

  it(`a pass keeps at most ${maxCallsPerPass} text calls; the rest of the text is dropped`, () => {
    const result = run([Array.from({ length: maxCallsPerPass + 3 }, (_, index) => `read_file("m${index}")`).join("\n")])
    assert.strictEqual(result.calls.length, maxCallsPerPass)
    assert.deepStrictEqual(result.calls.at(-1), { name: "read_file", args: { media_id: `m${maxCallsPerPass - 1}` } })
    assert.strictEqual(result.prose, "")
  })

  // Property: any chunking yields the same calls and the same prose.
  const pieces = fc.constantFrom(
    "Hi ", "there", ". ", "`", "``", "```", "```json\n", "\n", " ", "read_file", "read", "_file", "read_file_v2",
    "generate_image", "ping", "(", ")", "(\"media_1\")", "({\"prompt\":\"a (b)\",\"mode\":\"m\"})", "({\"id\":1})",
    "\"", "\\", "{", "}", "unknown_tool", "x", "it makes art"
  )
  it("property: any chunking yields the same calls and prose", () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 14 }), fc.array(fc.nat(), { maxLength: 8 }), (parts, offsets) => {
        const text = parts.join("")
        const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b)
        const chunks: Array<string> = []
        let previous = 0
        for (const point of [...points, text.length]) {
          chunks.push(text.slice(previous, point))
          previous = point
        }
        const whole = run([text])
        const chunked = run(chunks)
        assert.deepStrictEqual(chunked.calls, whole.calls)
        assert.strictEqual(chunked.prose, whole.prose)
        // Nothing is lost: without a call, all text comes out as prose.
        if (whole.calls.length === 0) assert.strictEqual(whole.prose, text)
      }),
      { numRuns: 2000 }
    )
  })
})

describe("parseVerbatimToolCalls (Stream transformer)", () => {
  it.effect("turns text deltas into prose and a ToolCall, drops text after it, relabels the finish", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        ProviderEvent.TextDelta({ text: "Looking: `rea" }),
        ProviderEvent.TextDelta({ text: "d_file(\"m1\")` and more" }),
        ProviderEvent.TextDelta({ text: "ignored" }),
        ProviderEvent.Finish({ reason: "stop" }),
        ProviderEvent.Usage({ usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } })
      ).pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.deepStrictEqual(events, [
        ProviderEvent.TextDelta({ text: "Looking: " }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" } } }),
        ProviderEvent.Finish({ reason: "tool_calls" }),
        ProviderEvent.Usage({ usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } })
      ])
    }))

  it.effect("several text calls become several ToolCalls, in order, before the relabelled finish", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        ProviderEvent.TextDelta({ text: "Both: `read_file(\"m1\")`\n`re" }),
        ProviderEvent.TextDelta({ text: "ad_file(\"m2\")` now" }),
        ProviderEvent.Finish({ reason: "stop" })
      ).pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.deepStrictEqual(events, [
        ProviderEvent.TextDelta({ text: "Both: " }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" } } }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m2" } } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
    }))

  it.effect("native calls all pass; text after the first native call is no longer parsed", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        ProviderEvent.TextDelta({ text: "Sure. " }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "a" }, id: "c1" } }),
        ProviderEvent.TextDelta({ text: "`read_file(\"b\")`" }),
        ProviderEvent.ToolCall({ call: { name: "ping", args: {}, id: "c2" } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ).pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.deepStrictEqual(events, [
        ProviderEvent.TextDelta({ text: "Sure. " }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "a" }, id: "c1" } }),
        ProviderEvent.ToolCall({ call: { name: "ping", args: {}, id: "c2" } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
    }))

  it.effect("a model that writes on after its calls is cut off: the stream closes, nothing later is read", () =>
    Effect.gen(function*() {
      const pulled = yield* Ref.make(0)
      const rambling = Stream.fromIterable([
        ProviderEvent.TextDelta({ text: "`read_file(\"m1\")` " }),
        ...Array.from({ length: 50 }, () => ProviderEvent.TextDelta({ text: "The file says hello world, " })),
        ProviderEvent.Finish({ reason: "stop" })
      ]).pipe(Stream.rechunk(1), Stream.tap(() => Ref.update(pulled, (n) => n + 1)))
      const events = yield* rambling.pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.deepStrictEqual(events, [
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" } } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      // 200 visible characters past the call: about ten 23-character deltas, never all fifty.
      const read = yield* Ref.get(pulled)
      assert.isAtMost(read, 15)
      assert.isAtLeast(read, 9)
    }))

  it.effect("a few words between calls do not end the pass", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        ProviderEvent.TextDelta({ text: "`read_file(\"m1\")` and then also, to be sure, " }),
        ProviderEvent.TextDelta({ text: "`read_file(\"m2\")`" }),
        ProviderEvent.Finish({ reason: "stop" })
      ).pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.strictEqual(events.filter((event) => event._tag === "ToolCall").length, 2)
    }))

  it.effect("releases held text before the finish", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        ProviderEvent.TextDelta({ text: "see `read" }),
        ProviderEvent.Finish({ reason: "length" })
      ).pipe(parseVerbatimToolCalls(tools), Stream.runCollect)
      assert.deepStrictEqual(events, [
        ProviderEvent.TextDelta({ text: "see " }),
        ProviderEvent.TextDelta({ text: "`read" }),
        ProviderEvent.Finish({ reason: "length" })
      ])
    }))
})
