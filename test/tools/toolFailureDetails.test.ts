import { assert, describe, it } from "@effect/vitest"
import { FAILURE_DETAILS_MAX_CHARS, failureDetails, isCredentialKey, redactCredentials, safeJson } from "../../src/tools/toolFailureDetails"

describe("hidden failure notice details (spec §3 step 8)", () => {
  it("credential-looking keys are recognised by their words, not by substrings", () => {
    for (const key of ["key", "api_key", "apiKey", "API-KEY", "access_token", "refreshToken", "client_secret", "password", "Authorization", "auth", "cookie", "credentials"]) {
      assert.isTrue(isCredentialKey(key), key)
    }
    for (const key of ["keywords", "query", "url", "author", "tokens_used", "monkey"]) {
      assert.isFalse(isCredentialKey(key), key)
    }
  })

  it("redaction is deep and leaves other values alone", () => {
    assert.deepStrictEqual(
      redactCredentials({ url: "https://x", headers: { Authorization: "Bearer abc" }, list: [{ password: "p" }, 3] }),
      { url: "https://x", headers: { Authorization: "[redacted]" }, list: [{ password: "[redacted]" }, 3] }
    )
  })

  it("JSON never throws: bigints and cycles are rendered", () => {
    const cyclic: Record<string, unknown> = { n: 10n }
    cyclic["self"] = cyclic
    assert.include(safeJson(cyclic), "\"10\"")
    assert.include(safeJson(cyclic), "[circular]")
    assert.strictEqual(safeJson(undefined), "null")
  })

  it("details are capped at 1800 characters", () => {
    const details = failureDetails({ q: "x" }, { blob: "y".repeat(10_000) })
    assert.strictEqual(details.length, FAILURE_DETAILS_MAX_CHARS)
    assert.isTrue(details.endsWith("…"))
    assert.include(failureDetails({ q: "x" }, undefined), "\"q\": \"x\"")
  })
})
