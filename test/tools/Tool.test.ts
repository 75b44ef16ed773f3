import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { jsonSchemaOf } from "../../src/tools/Tool"

describe("jsonSchemaOf", () => {
  it("always carries properties and required", () => {
    assert.deepStrictEqual(jsonSchemaOf(Schema.Struct({ a: Schema.optional(Schema.String) })), {
      type: "object",
      properties: { a: { type: "string" } },
      required: [],
      additionalProperties: false
    })
    assert.deepStrictEqual(jsonSchemaOf(Schema.Struct({ a: Schema.String })).required, ["a"])
  })

  it("an empty struct is an empty object schema (a tool without parameters)", () => {
    assert.deepStrictEqual(jsonSchemaOf(Schema.Struct({})), { type: "object", properties: {}, required: [] })
  })

  it("a non-object schema is refused", () => {
    assert.throws(() => jsonSchemaOf(Schema.String))
  })
})
