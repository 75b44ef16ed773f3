import { assert, describe, it } from "@effect/vitest"
import { parseJsonOrUndefined } from "../../src/domain/parseJson"

describe("parseJsonOrUndefined", () => {
  it("returns the value of any JSON text, null and false included", () => {
    assert.deepStrictEqual(parseJsonOrUndefined('{"a":[1,"x"]}'), { a: [1, "x"] })
    assert.strictEqual(parseJsonOrUndefined("null"), null)
    assert.strictEqual(parseJsonOrUndefined("false"), false)
    assert.strictEqual(parseJsonOrUndefined(" 12 "), 12)
  })

  it("returns undefined for text that is not JSON, never throws", () => {
    for (const text of ["", "{", "{'a':1}", "undefined", "<html>", '{"a":1}x']) {
      assert.isUndefined(parseJsonOrUndefined(text), text)
    }
  })
})
