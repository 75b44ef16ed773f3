import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import fc from "fast-check"
import { type Decoder, decodeWith } from "../../../src/provider/decodeWith"
import { decodeSse, decodeSseBytes, type SseFrame } from "../../../src/provider/sse/Sse"
import { SseParser } from "../../../src/provider/sse/SseParser"
import { cutAt } from "../../support/cutAt"

const parseWhole = (text: string): ReadonlyArray<SseFrame> => {
  const parser = new SseParser()
  const out: Array<SseFrame> = []
  parser.feed(text, out)
  parser.end(out)
  return out
}

const parsePieces = (pieces: ReadonlyArray<string>): ReadonlyArray<SseFrame> => {
  const parser = new SseParser()
  const out: Array<SseFrame> = []
  for (const piece of pieces) parser.feed(piece, out)
  parser.end(out)
  return out
}


// A transcript model: events (optional name, id, multi-line data) and comments, any line ending.
const lineText = fc.string({ unit: fc.constantFrom("a", "b", "{", "}", ":", " ", "\"", "é", "😀", "[", "]"), maxLength: 12 })
const frameArb = fc.oneof(
  fc.record({
    kind: fc.constant("event" as const),
    event: fc.option(fc.constantFrom("message", "content_block_delta", "ping"), { nil: undefined }),
    id: fc.option(fc.constantFrom("1", "abc"), { nil: undefined }),
    lines: fc.array(lineText, { minLength: 1, maxLength: 3 })
  }),
  fc.record({ kind: fc.constant("comment" as const), text: fc.constantFrom("keep-alive", "OPENROUTER PROCESSING", "") })
)
const eolArb = fc.constantFrom("\n", "\r\n", "\r")

type ModelFrame = typeof frameArb extends fc.Arbitrary<infer T> ? T : never

const render = (frames: ReadonlyArray<ModelFrame>, eol: string): string =>
  frames.map((frame) =>
    frame.kind === "comment"
      ? `: ${frame.text}${eol}`
      : `${frame.event === undefined ? "" : `event: ${frame.event}${eol}`}${frame.id === undefined ? "" : `id: ${frame.id}${eol}`}${
        frame.lines.map((line) => `data: ${line}${eol}`).join("")
      }${eol}`
  ).join("")

describe("SseParser", () => {
  it("decodes events, comments, multi-line data, names and ids", () => {
    const frames = parseWhole(": keep-alive\n\nevent: ping\ndata: {}\n\ndata: line one\ndata: line two\nid: 7\n\ndata:no-space\n\n")
    assert.deepStrictEqual(frames, [
      { _tag: "Comment", text: "keep-alive" },
      { _tag: "Event", event: "ping", data: "{}", id: undefined },
      { _tag: "Event", event: "message", data: "line one\nline two", id: "7" },
      { _tag: "Event", event: "message", data: "no-space", id: "7" }
    ])
  })

  it("treats CRLF split across pieces as one line break and strips a leading BOM", () => {
    const frames = parsePieces(["\uFEFFdata: a\r", "\n\r", "\ndata: b\r\n\r\n"])
    assert.deepStrictEqual(frames.map((frame) => frame._tag === "Event" ? frame.data : frame.text), ["a", "b"])
  })

  it("ignores retry and unknown fields, and events without data", () => {
    assert.deepStrictEqual(parseWhole("retry: 10\nfoo: bar\nevent: x\n\ndata: y\n\n").map((frame) => frame._tag), ["Event"])
  })

  it("dispatches a final event whose blank line never came", () => {
    assert.deepStrictEqual(parseWhole("data: [DONE]"), [{ _tag: "Event", event: "message", data: "[DONE]", id: undefined }])
  })

  it("stops with tooLarge when an event outgrows the cap", () => {
    const parser = new SseParser(64)
    const out: Array<SseFrame> = []
    parser.feed(`data: ${"x".repeat(100)}`, out)
    assert.isTrue(parser.tooLarge)
  })

  it("property: any split of a valid transcript decodes identically", () => {
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 8 }), eolArb, fc.array(fc.nat(), { maxLength: 12 }), (frames, eol, offsets) => {
        const text = render(frames, eol)
        assert.deepStrictEqual(parsePieces(cutAt(text, offsets)), parseWhole(text))
      }),
      { numRuns: 400 }
    )
  })

  it("property: the decoded frames are the ones written", () => {
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 8 }), eolArb, (frames, eol) => {
        const decoded = parseWhole(render(frames, eol))
        const expected = frames.map((frame) =>
          frame.kind === "comment" ? { tag: "Comment", value: frame.text } : { tag: "Event", value: frame.lines.join("\n") }
        )
        assert.deepStrictEqual(
          decoded.map((frame) => frame._tag === "Comment" ? { tag: "Comment", value: frame.text } : { tag: "Event", value: frame.data }),
          expected
        )
      }),
      { numRuns: 300 }
    )
  })
})

describe("decodeSse (Stream transformer)", () => {
  it.effect("property: any split of the UTF-8 bytes decodes to the same frames", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(frameArb, { minLength: 1, maxLength: 6 }), eolArb, fc.array(fc.nat(), { maxLength: 10 }), async (frames, eol, offsets) => {
          const text = render(frames, eol)
          const bytes = new TextEncoder().encode(text)
          const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b)
          const pieces: Array<Uint8Array> = []
          let previous = 0
          for (const point of [...points, bytes.length]) {
            pieces.push(bytes.subarray(previous, point))
            previous = point
          }
          const decoded = await Effect.runPromise(
            Stream.fromIterable(pieces).pipe(Stream.decodeText(), decodeSse(), Stream.runCollect)
          )
          assert.deepStrictEqual(decoded, parseWhole(text))
        }),
        { numRuns: 150 }
      )
    ))

  it.effect("fails with SseError when an event never ends", () =>
    Effect.gen(function*() {
      const error = yield* Stream.make(`data: ${"x".repeat(200)}`).pipe(decodeSse({ maxEventChars: 100 }), Stream.runDrain, Effect.flip)
      assert.strictEqual(error._tag, "SseError")
    }))
})

describe("decodeSseBytes (bytes → text → SSE → decoder in one stage)", () => {
  /** A frame decoder that records what it was given, may stop after `stopAfter` frames, and marks the end. */
  const recorder = (stopAfter: number | undefined) => (): Decoder<SseFrame, string, never> => {
    let seen = 0
    return {
      push: (frames) => {
        const out: Array<string> = []
        for (const frame of frames) {
          out.push(JSON.stringify(frame))
          seen += 1
          if (stopAfter !== undefined && seen >= stopAfter) return { out, done: true }
        }
        return { out }
      },
      end: () => ({ out: ["<end>"] })
    }
  }

  const drain = (stream: Stream.Stream<string, string>) =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const result = yield* Stream.runForEach(stream, (item) => Effect.sync(() => seen.push(item))).pipe(Effect.result)
      return { seen, failure: result._tag === "Failure" ? result.failure : undefined }
    })

  it.effect("property: decodes exactly like decodeText + decodeSse + decodeWith, early stops and too-large events included", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(frameArb, { minLength: 1, maxLength: 6 }),
          eolArb,
          fc.array(fc.nat(), { maxLength: 10 }),
          fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
          fc.integer({ min: 4, max: 120 }),
          async (frames, eol, offsets, stopAfter, maxEventChars) => {
            const bytes = new TextEncoder().encode(render(frames, eol))
            const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b)
            const pieces: Array<Uint8Array> = []
            let previous = 0
            for (const point of [...points, bytes.length]) {
              pieces.push(bytes.subarray(previous, point))
              previous = point
            }
            const source = Stream.fromIterable(pieces)
            const staged = source.pipe(
              Stream.decodeText(),
              decodeSse({ maxEventChars }),
              Stream.catchTag("SseError", (error) => Stream.fail(`too large: ${error.maxEventChars}`)),
              decodeWith(recorder(stopAfter))
            )
            const fused = source.pipe(
              decodeSseBytes(recorder(stopAfter), (error) => Effect.fail(`too large: ${error.maxEventChars}`), { maxEventChars })
            )
            const [expected, actual] = await Effect.runPromise(Effect.all([drain(staged), drain(fused)]))
            assert.deepStrictEqual(actual, expected)
          }
        ),
        { numRuns: 200 }
      )
    ))
})
