import { assert, describe, it } from "@effect/vitest"
import { urlArguments } from "../../src/mcp/urlArguments"

describe("urlArguments (spec §6.5)", () => {
  it("finds properties named url, uri or urls, whatever their schema", () => {
    assert.deepStrictEqual(
      urlArguments({}, { url: "http://a/", URI: "http://b/", urls: ["http://c/", "http://d/"], query: "http://not-a-url-field/" }),
      ["http://a/", "http://b/", "http://c/", "http://d/"]
    )
  })

  it("finds `format: uri` properties and arrays whose items are `format: uri`", () => {
    const schema = {
      type: "object",
      properties: {
        target: { type: "string", format: "uri" },
        mirrors: { type: "array", items: { type: "string", format: "uri" } },
        note: { type: "string" }
      }
    }
    assert.deepStrictEqual(urlArguments(schema, { target: "http://t/", mirrors: ["http://m1/", "http://m2/"], note: "http://n/" }), [
      "http://t/",
      "http://m1/",
      "http://m2/"
    ])
  })

  it("recurses through nested objects and arrays of objects", () => {
    const schema = {
      type: "object",
      properties: {
        requests: {
          type: "array",
          items: { type: "object", properties: { endpoint: { type: "string", format: "uri" }, options: { type: "object" } } }
        }
      }
    }
    const args = { requests: [{ endpoint: "http://e1/", options: { url: "http://deep/" } }, { endpoint: "http://e2/" }] }
    assert.deepStrictEqual(urlArguments(schema, args), ["http://e1/", "http://deep/", "http://e2/"])
  })

  it("ignores non-string values and arguments without URL fields", () => {
    assert.deepStrictEqual(urlArguments({}, { url: 42, uri: { nested: true }, text: "hello" }), [])
    assert.deepStrictEqual(urlArguments(undefined, undefined), [])
  })
})
