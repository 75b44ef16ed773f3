import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { jsonPost } from "../../src/provider/providerHttp"

describe("jsonPost", () => {
  it.effect("a POST with the JSON body, its content type and `accept: text/event-stream`, the caller's headers on top", () =>
    Effect.gen(function*() {
      const request = yield* jsonPost({ provider: "p", url: "http://127.0.0.1:1/v1/x", headers: { authorization: "Bearer k" }, body: { a: 1 } })
      assert.strictEqual(request.method, "POST")
      assert.strictEqual(request.url, "http://127.0.0.1:1/v1/x")
      assert.strictEqual(request.headers["accept"], "text/event-stream")
      assert.strictEqual(request.headers["authorization"], "Bearer k")
      assert.strictEqual(request.body._tag, "Uint8Array")
      if (request.body._tag === "Uint8Array") {
        assert.strictEqual(request.body.contentType, "application/json")
        assert.strictEqual(new TextDecoder().decode(request.body.body), "{\"a\":1}")
      }
    }))

  it.effect("a body that cannot be encoded (a BigInt) is a BadRequest, not a defect", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(jsonPost({ provider: "p", url: "http://127.0.0.1:1/v1/x", headers: {}, body: { n: 1n } }))
      assert.strictEqual(error.reason, "BadRequest")
      assert.strictEqual(error.provider, "p")
      assert.include(error.detail, "could not be encoded as JSON")
    }))
})
