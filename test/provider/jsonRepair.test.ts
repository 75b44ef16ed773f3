import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { tryRepairIncompleteJson } from "../../src/provider/jsonRepair"
import { classifyArguments, finalizeArguments } from "../../src/provider/toolArguments"

const context = { adapter: "test", toolName: "t", maxRepairChars: 1_048_576, outputCut: false }

describe("tryRepairIncompleteJson (spec §9)", () => {
  it("[115] keeps the complete entries and drops a string cut mid-way", () => {
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":\"x\",\"b\":\"cut"), { a: "x" })
    assert.deepStrictEqual(
      tryRepairIncompleteJson("{\"scene_state\":\"calm\", \"bodies_and_wardrobe\":\"Noah: honey"),
      { scene_state: "calm" }
    )
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"scene_state\":\"unfinished"), {})
  })

  it("[115] malformed input is not a truncation: no repair", () => {
    assert.isNull(tryRepairIncompleteJson("{\"a\": }"))
    assert.isNull(tryRepairIncompleteJson("{\"a\":1,}"))
    assert.isNull(tryRepairIncompleteJson("[,1"))
    assert.isNull(tryRepairIncompleteJson("{\"a\":[1}"))
    assert.isNull(tryRepairIncompleteJson("{'a':1"))
    assert.isNull(tryRepairIncompleteJson("{\"a\":tx"))
  })

  it("[116] drops a number at the very end (it may be cut)", () => {
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":\"x\",\"n\":12345"), { a: "x" })
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":[1,2,3"), { a: [1, 2] })
    // A number that a delimiter closed is complete.
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"n\":12345, \"b\":\"c"), { n: 12345 })
  })

  it("[118] refuses input longer than the cap", () => {
    const big = `{"a":"x","b":"${"y".repeat(2000)}`
    assert.isNull(tryRepairIncompleteJson(big, 1024))
    assert.deepStrictEqual(tryRepairIncompleteJson(big, 4096), { a: "x" })
  })

  it("closes open containers, keeping complete nested entries and dropping empty pending ones", () => {
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":{\"b\":1,\"c\":\"cu"), { a: { b: 1 } })
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"k\":1,\"a\":{\"b\":"), { k: 1 })
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":true"), { a: true })
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":nul"), {})
    assert.deepStrictEqual(tryRepairIncompleteJson("{\"a\":\"x\\u00"), {})
    assert.deepStrictEqual(tryRepairIncompleteJson("{ \"a\" : \"x\" , "), { a: "x" })
  })

  it("returns null for complete, empty, or non-object input", () => {
    assert.isNull(tryRepairIncompleteJson("{\"a\":1}"))
    assert.isNull(tryRepairIncompleteJson(""))
    assert.isNull(tryRepairIncompleteJson("[1,2"))
    assert.isNull(tryRepairIncompleteJson("\"abc"))
  })
})

describe("classifyArguments / finalizeArguments", () => {
  it("[114] complete arguments parse and are not marked", () => {
    const { result, log } = finalizeArguments("{\"summary\": \"they moved\"}", context)
    assert.deepStrictEqual(result, { args: { summary: "they moved" }, truncated: false })
    assert.isUndefined(log)
  })

  it("[115] repaired arguments are marked truncated and logged; malformed ones are {} unmarked", () => {
    const repaired = finalizeArguments("{\"a\":\"x\",\"b\":\"cut", context)
    assert.deepStrictEqual(repaired.result, { args: { a: "x" }, truncated: true })
    assert.isDefined(repaired.log)
    const malformed = finalizeArguments("{\"a\": }", context)
    assert.deepStrictEqual(malformed.result, { args: {}, truncated: false })
  })

  it("[118] oversized unparseable arguments get {} unmarked", () => {
    const raw = `{"a":"${"z".repeat(5000)}`
    assert.deepStrictEqual(finalizeArguments(raw, { ...context, maxRepairChars: 1024 }).result, { args: {}, truncated: false })
  })

  it("empty arguments are {}; when the provider cut the output they are truncated", () => {
    assert.deepStrictEqual(classifyArguments("  "), { _tag: "Empty" })
    assert.deepStrictEqual(finalizeArguments("", context).result, { args: {}, truncated: false })
    assert.deepStrictEqual(finalizeArguments("", { ...context, outputCut: true }).result, { args: {}, truncated: true })
    assert.deepStrictEqual(finalizeArguments("{\"a\": }", { ...context, outputCut: true }).result, { args: {}, truncated: true })
  })

  it("JSON that is not an object is unparseable", () => {
    assert.deepStrictEqual(classifyArguments("[1]"), { _tag: "Unparseable" })
    assert.deepStrictEqual(classifyArguments("\"s\""), { _tag: "Unparseable" })
  })
})

// --- property: repairing any prefix of a valid object yields a subset of it -------------------

/** `repaired` keeps only what `original` has: object keys ⊆, array elements a prefix, leaves equal. */
const isStructuralSubset = (repaired: unknown, original: unknown): boolean => {
  if (Array.isArray(repaired)) {
    return Array.isArray(original) && repaired.length <= original.length &&
      repaired.every((item, index) =>
        index < repaired.length - 1 ? deepEqual(item, original[index]) : isStructuralSubset(item, original[index])
      )
  }
  if (typeof repaired === "object" && repaired !== null) {
    if (typeof original !== "object" || original === null || Array.isArray(original)) return false
    const source = original as Record<string, unknown>
    return Object.entries(repaired).every(([key, value]) => key in source && isStructuralSubset(value, source[key]))
  }
  return deepEqual(repaired, original)
}

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const keyArb = fc.string({ unit: fc.constantFrom("a", "b", "k", "é", "\"", "\\", " "), minLength: 1, maxLength: 4 })
const leafArb = fc.oneof(
  fc.string({ unit: fc.constantFrom("x", "y", " ", "\"", "\\", "\n", "😀", "}", "{", ",", ":"), maxLength: 8 }),
  fc.integer({ min: -100000, max: 100000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.boolean(),
  fc.constant(null)
)
const valueArb = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leafArb, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.dictionary(keyArb, tie("value"), { maxKeys: 3 })
})).value
const objectArb = fc.dictionary(keyArb, valueArb, { minKeys: 1, maxKeys: 5 })

/** Serializes with known top-level entry end offsets (JSON.stringify's own layout). */
const serialize = (object: Record<string, unknown>) => {
  let text = "{"
  const ends: Array<{ readonly key: string; readonly end: number; readonly isNumber: boolean }> = []
  Object.entries(object).forEach(([key, value], index) => {
    if (index > 0) text += ","
    text += `${JSON.stringify(key)}:${JSON.stringify(value)}`
    ends.push({ key, end: text.length, isNumber: typeof value === "number" })
  })
  return { text: `${text}}`, ends }
}

describe("JSON repair properties", () => {
  it("property: any prefix repairs to a structural subset and keeps every complete top-level entry", () => {
    fc.assert(
      fc.property(objectArb, fc.double({ min: 0, max: 1, noNaN: true }), (object, fraction) => {
        const { ends, text } = serialize(object)
        const cutAt = Math.floor(fraction * (text.length - 1))
        const prefix = text.slice(0, cutAt)
        const repaired = tryRepairIncompleteJson(prefix)
        if (prefix.trim().length === 0) {
          assert.isNull(repaired)
          return
        }
        assert.isNotNull(repaired, `prefix ${JSON.stringify(prefix)} should repair`)
        assert.isTrue(isStructuralSubset(repaired, JSON.parse(text)), `${JSON.stringify(repaired)} ⊄ ${text}`)
        for (const entry of ends) {
          const complete = entry.end < cutAt || (entry.end === cutAt && !entry.isNumber)
          if (complete) {
            assert.isTrue(entry.key in repaired!, `complete entry ${entry.key} was lost from ${JSON.stringify(prefix)}`)
            assert.isTrue(deepEqual(repaired![entry.key], object[entry.key]))
          }
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("property: a complete object is never 'repaired', and parses as is", () => {
    fc.assert(
      fc.property(objectArb, (object) => {
        const text = JSON.stringify(object)
        assert.isNull(tryRepairIncompleteJson(text))
        assert.deepStrictEqual(classifyArguments(text), { _tag: "Parsed", args: JSON.parse(text) })
      }),
      { numRuns: 300 }
    )
  })
})
