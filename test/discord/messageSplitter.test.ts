import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { DISCORD_MESSAGE_LIMIT, nextChunk, splitMessage } from "../../src/discord/messageSplitter"

// An independent, deliberately simple fence tracker (CommonMark-style fences at line starts).
const fenceLine = /^ {0,3}(`{3,64}(?!`)|~{3,64}(?!~))(.*)$/
const isFenceLine = (line: string) => fenceLine.test(line)

/** True when every fence opened in `content` is closed again inside it. */
const fencesBalanced = (content: string): boolean => {
  let open: string | undefined
  for (const line of content.split("\n")) {
    const match = fenceLine.exec(line)
    if (match === null) continue
    const marker = match[1] ?? ""
    const rest = match[2] ?? ""
    if (open === undefined) {
      if (marker[0] === "`" && rest.includes("`")) continue
      open = marker
    } else if (marker[0] === open[0] && marker.length >= open.length && rest.trim() === "") {
      open = undefined
    }
  }
  return open === undefined
}

/**
 * Whether the chunks are the input with only fence lines added: each chunk is an optional added
 * fence line + "\n", a piece of the input, then an optional ("\n" +) added fence line.
 */
const reassembles = (chunks: ReadonlyArray<string>, input: string): boolean => {
  const search = (index: number, position: number): boolean => {
    if (index === chunks.length) return position === input.length
    const chunk = chunks[index] ?? ""
    const lines = chunk.split("\n")
    const first = lines[0] ?? ""
    const last = lines[lines.length - 1] ?? ""
    const prefixes = index > 0 && isFenceLine(first) && lines.length > 1 ? ["", `${first}\n`] : [""]
    const suffixes = isFenceLine(last) ? ["", last, `\n${last}`] : [""]
    for (const prefix of prefixes) {
      for (const suffix of suffixes) {
        if (prefix.length + suffix.length > chunk.length) continue
        const body = chunk.slice(prefix.length, chunk.length - suffix.length)
        if (input.startsWith(body, position) && body.length > 0 && search(index + 1, position + body.length)) return true
      }
    }
    return false
  }
  return search(0, 0)
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff
const noSplitSurrogate = (chunks: ReadonlyArray<string>) =>
  chunks.every((chunk) => !isLow(chunk.charCodeAt(0)) && !isHigh(chunk.charCodeAt(chunk.length - 1)))

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("hello", "world", "the", "streaming", "reply", "x", "é", "日本語", "😀", "👩‍💻", "🇯🇵") },
  { weight: 4, arbitrary: fc.constantFrom(" ", " ", "\n", "\n\n", "\t") },
  { weight: 2, arbitrary: fc.constantFrom("```", "```ts", "```python", "~~~", "````md", "``` ", "```js title=\"a b\"", "  ```") },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 300, size: "max", unit: fc.constantFrom("a", "😀", "`", "~", "b") }) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40, unit: "binary" }) }
)
// Fence markers only count at line starts, so they get a newline before them half of the time.
const text = fc.array(fc.tuple(fc.boolean(), piece).map(([newline, value]) => (newline && value.startsWith("`") ? `\n${value}\n` : value)), {
  maxLength: 1500,
  size: "max"
}).map((pieces) => pieces.join(""))

describe("messageSplitter", () => {
  it("every chunk fits, reassembles to the input modulo added fence lines, balances fences, keeps surrogate pairs", () => {
    fc.assert(
      fc.property(text, fc.constantFrom(DISCORD_MESSAGE_LIMIT, 200, 120), (input, limit) => {
        const chunks = splitMessage(input, limit)
        assert.isTrue(chunks.every((chunk) => chunk.length <= limit), "a chunk exceeds the limit")
        assert.isTrue(chunks.every(fencesBalanced), "a chunk has an unbalanced fence")
        assert.isTrue(noSplitSurrogate(chunks), "a surrogate pair was split")
        assert.isTrue(reassembles(chunks, input), "chunks do not reassemble to the input")
      }),
      { numRuns: 300 }
    )
  })

  it("is prefix-stable: a sealed message never changes as the text grows", () => {
    fc.assert(
      fc.property(text, fc.nat(), (input, cut) => {
        const prefix = input.slice(0, input.length === 0 ? 0 : cut % input.length)
        const early = splitMessage(prefix, 200)
        const late = splitMessage(input, 200)
        // All but the last message of the shorter text are final.
        early.slice(0, -1).forEach((chunk, index) => assert.strictEqual(late[index], chunk))
      }),
      { numRuns: 200 }
    )
  })

  it("a 5000-character reply with a code block becomes valid messages with the fence reopened in its language", () => {
    const prose = "This is some explanatory prose about the code below. ".repeat(30)
    const code = Array.from({ length: 120 }, (_, i) => `  const value${i} = compute(${i}) // line ${i}`).join("\n")
    const input = `${prose}\n\n\`\`\`typescript\n${code}\n\`\`\`\n\nThat is all.`
    assert.isTrue(input.length > 5000)
    const chunks = splitMessage(input)
    assert.isTrue(chunks.length >= 3)
    for (const chunk of chunks) {
      assert.isTrue(chunk.length <= 2000)
      assert.isTrue(fencesBalanced(chunk))
    }
    // Every message after the one that opened the block starts by reopening it with its language.
    const opened = chunks.findIndex((chunk) => chunk.includes("```typescript"))
    const inside = chunks.slice(opened + 1).filter((chunk) => chunk.includes("const value"))
    assert.isTrue(inside.length >= 1)
    for (const chunk of inside) assert.isTrue(chunk.startsWith("```typescript\n"), chunk.slice(0, 40))
    assert.isTrue(reassembles(chunks, input))
  })

  it("prefers a paragraph break, then a line break, then a space", () => {
    const paragraph = `${"a".repeat(150)}\n\n${"b".repeat(100)}`
    assert.deepStrictEqual(splitMessage(paragraph, 200), [`${"a".repeat(150)}\n\n`, "b".repeat(100)])
    const words = `${"word ".repeat(50)}`
    const chunks = splitMessage(words, 100)
    assert.isTrue(chunks.every((chunk) => chunk.endsWith(" ") || chunk === chunks[chunks.length - 1]))
  })

  it("does not end a message on a fence's opening line", () => {
    const input = `${"x ".repeat(90)}\n\`\`\`py\n${"print(1)\n".repeat(20)}\`\`\``
    const [first] = splitMessage(input, 200)
    assert.isFalse(first?.trimEnd().endsWith("```py"))
  })

  it("closes a fence the text leaves open at the end", () => {
    assert.deepStrictEqual(splitMessage("```js\nlet a = 1"), ["```js\nlet a = 1\n```"])
    assert.deepStrictEqual(nextChunk("```js\nlet a = 1\n", 0, undefined).content, "```js\nlet a = 1\n```")
  })

  it("hard-cuts text without spaces next to an emoji without splitting it", () => {
    const input = `${"a".repeat(199)}😀${"b".repeat(50)}`
    const chunks = splitMessage(input, 200)
    assert.deepStrictEqual(chunks, ["a".repeat(199), `😀${"b".repeat(50)}`])
  })

  it("gives no messages for empty text", () => {
    assert.deepStrictEqual(splitMessage(""), [])
  })
})
