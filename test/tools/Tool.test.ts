import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { jsonSchemaOf, makeTool } from "../../src/tools/Tool"
import { ToolContext } from "../../src/tools/ToolContext"
import { testToolContext } from "../support/tools/testToolContext"

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

  it("the provider wire: plain numbers, optional values without null, enums and check fragments with their descriptions", () => {
    const parameters = Schema.Struct({
      url: Schema.String.check(
        Schema.makeFilter((value: string) => value.trim().length > 0 || "url must be a non-empty string", {
          description: "The URL.",
          toJsonSchema: () => ({ minLength: 1 })
        })
      ),
      count: Schema.optional(Schema.Number.annotate({ description: "How many." })),
      kind: Schema.Literals(["mute", "block"]).annotate({ description: "Which." }),
      only: Schema.optional(Schema.Literals(["text"]).annotate({ description: "One kind." })),
      raw: Schema.optional(Schema.Boolean),
      tags: Schema.optional(Schema.Array(Schema.String)),
      nested: Schema.optional(Schema.Struct({ x: Schema.Number }))
    })
    assert.deepStrictEqual(jsonSchemaOf(parameters), {
      type: "object",
      properties: {
        url: { type: "string", minLength: 1, description: "The URL." },
        count: { type: "number", description: "How many." },
        kind: { type: "string", enum: ["mute", "block"], description: "Which." },
        only: { type: "string", enum: ["text"], description: "One kind." },
        raw: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
        nested: { type: "object", properties: { x: { type: "number" } }, required: ["x"], additionalProperties: false }
      },
      required: ["url", "kind"],
      additionalProperties: false
    })
  })
})

describe("makeTool", () => {
  const tool = makeTool({
    name: "probe",
    description: "A probe.",
    category: "utility",
    parameters: Schema.Struct({
      url: Schema.String.check(Schema.makeFilter((value: string) => value.trim().length > 0 || "url must be a non-empty string")),
      kind: Schema.Literals(["mute", "block"]),
      n: Schema.optional(Schema.Number)
    }),
    execute: (args) => Effect.succeed(toolSuccess(args))
  })
  const execute = (args: Readonly<Record<string, unknown>>) =>
    Effect.flatMap(testToolContext(), ({ context }) => Effect.provideService(tool.execute(args), ToolContext, context))

  it.effect("bad arguments read as a tree: the expected shape, then each property and why", () =>
    Effect.gen(function*() {
      const result = yield* execute({ url: " ", kind: "ban", n: "3" })
      assert.deepStrictEqual(result, {
        success: false,
        error: [
          "Invalid arguments for probe: { readonly url: string; readonly kind: \"mute\" | \"block\"; readonly n?: number | undefined }",
          "├─ [\"url\"]",
          "│  └─ url must be a non-empty string",
          "├─ [\"kind\"]",
          "│  └─ Expected \"mute\" | \"block\", actual \"ban\"",
          "└─ [\"n\"]",
          "   └─ Expected number | undefined, actual \"3\""
        ].join("\n")
      })
      const missing = yield* execute({})
      assert.include(missing.error ?? "", "├─ [\"url\"]\n│  └─ is missing")
    }))

  it.effect("valid arguments reach execute decoded, extra keys dropped", () =>
    Effect.gen(function*() {
      const result = yield* execute({ url: "https://example.test/", kind: "mute", extra: true })
      assert.deepStrictEqual(result, toolSuccess({ url: "https://example.test/", kind: "mute" }))
    }))
})
