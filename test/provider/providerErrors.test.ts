import { assert, describe, it } from "@effect/vitest"
import { HttpClientError, HttpClientRequest, HttpClientResponse } from "effect/http"
import { Duration } from "effect"
import {
  endedEarly,
  errorMessageOf,
  fromHttpClientError,
  fromStatus,
  fromStreamErrorPayload,
  reasonForStatus,
  retryAfterFrom
} from "../../src/provider/providerErrors"

describe("provider error mapping table", () => {
  it("maps HTTP statuses to reasons", () => {
    const table: ReadonlyArray<readonly [number, string]> = [
      [400, "BadRequest"],
      [401, "Auth"],
      [402, "Auth"],
      [403, "Auth"],
      [404, "BadRequest"],
      [408, "Network"],
      [413, "BadRequest"],
      [422, "BadRequest"],
      [429, "RateLimit"],
      [500, "Server"],
      [502, "Server"],
      [503, "Server"],
      [504, "Server"],
      [529, "Server"],
      [302, "InvalidResponse"]
    ]
    for (const [status, reason] of table) assert.strictEqual(reasonForStatus(status), reason, `HTTP ${status}`)
  })

  it("reads Retry-After as seconds, as an HTTP date, and OpenAI's retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.deepStrictEqual(retryAfterFrom({ "retry-after": "12" }, now), Duration.seconds(12))
    assert.deepStrictEqual(retryAfterFrom({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }, now), Duration.millis(30_000))
    assert.deepStrictEqual(retryAfterFrom({ "retry-after-ms": "250", "retry-after": "1" }, now), Duration.millis(250))
    assert.isUndefined(retryAfterFrom({ "retry-after": "soon" }, now))
    assert.isUndefined(retryAfterFrom({}, now))
  })

  it("extracts vendor messages from every envelope shape", () => {
    assert.strictEqual(errorMessageOf({ error: { message: "m" } }), "m")
    assert.strictEqual(errorMessageOf([{ error: { code: 429, message: "quota" } }]), "quota")
    assert.strictEqual(errorMessageOf({ type: "error", error: { type: "x", message: "anthropic" } }), "anthropic")
    assert.strictEqual(errorMessageOf({ error: "plain" }), "plain")
    assert.strictEqual(errorMessageOf({ error: { message: "Provider returned error", metadata: { raw: "upstream says no" } } }), "Provider returned error: upstream says no")
    assert.isUndefined(errorMessageOf("nope"))
  })

  it("builds errors from status, body and headers; non-JSON bodies are collapsed into the detail", () => {
    const error = fromStatus({ provider: "p", status: 503, headers: { "retry-after": "2" }, body: "<html>\n  Service   Unavailable\n</html>", nowMillis: 0 })
    assert.strictEqual(error.reason, "Server")
    assert.strictEqual(error.status, 503)
    assert.strictEqual(error.detail, "<html> Service Unavailable </html>")
    assert.deepStrictEqual(error.retryAfter, Duration.seconds(2))
    assert.strictEqual(error.message, "p Server (HTTP 503): <html> Service Unavailable </html>")
    assert.include(fromStatus({ provider: "p", status: 500, headers: {}, body: "", nowMillis: 0 }).detail, "empty body")
  })

  it("classifies in-stream error objects by numeric code or type", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ error: { code: 429, message: "x" } }, "RateLimit"],
      [{ error: { code: 502, message: "x" } }, "Server"],
      [{ error: { type: "rate_limit_error", message: "x" } }, "RateLimit"],
      [{ error: { type: "overloaded_error", message: "x" } }, "Server"],
      [{ error: { type: "authentication_error", message: "x" } }, "Auth"],
      [{ error: { type: "permission_error", message: "x" } }, "Auth"],
      [{ error: { type: "invalid_request_error", message: "x" } }, "BadRequest"],
      [{ error: { status: "RESOURCE_EXHAUSTED", message: "x" } }, "RateLimit"],
      [{ error: { status: "INVALID_ARGUMENT", message: "x" } }, "BadRequest"],
      [{ error: { message: "no type at all" } }, "Server"]
    ]
    for (const [payload, reason] of cases) {
      assert.strictEqual(fromStreamErrorPayload("p", payload).reason, reason, JSON.stringify(payload))
    }
  })

  it("a body that ended early is Network; one with no events at all is InvalidResponse", () => {
    assert.strictEqual(endedEarly("p", true).reason, "Network")
    assert.strictEqual(endedEarly("p", false).reason, "InvalidResponse")
  })

  it("a failed response keeps no request in the ProviderError, so no API-key header can reach a log", () => {
    const request = HttpClientRequest.post("http://127.0.0.1:1/v1beta/models/m:streamGenerateContent").pipe(
      HttpClientRequest.setHeaders({ "x-goog-api-key": "secret-gemini-key", authorization: "Bearer secret-token" })
    )
    const response = HttpClientResponse.fromWeb(request, new Response("oops", { status: 200 }))
    const error = fromHttpClientError(
      "google",
      new HttpClientError.HttpClientError({ reason: new HttpClientError.DecodeError({ request, response, cause: new Error("socket hang up") }) })
    )
    const everything = [error.message, error.detail, String(error.cause), JSON.stringify(error), JSON.stringify(error.cause)].join("\n")
    assert.notInclude(everything, "secret-gemini-key")
    assert.notInclude(everything, "secret-token")
    assert.include(error.detail, "socket hang up")
  })
})
