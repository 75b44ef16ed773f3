import { assert, describe, it } from "@effect/vitest"
import { preToolTextParts, responsePayload } from "../../src/domain/ToolHistoryEntry"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"

describe("function response payload (spec §1.4)", () => {
  it("[3] a success without data replays {status: completed}", () => {
    assert.deepStrictEqual(responsePayload("t", toolSuccess()), { status: "completed" })
  })
  it("[2] a success replays its data verbatim", () => {
    assert.deepStrictEqual(responsePayload("echo_tool", toolSuccess({ echoed: "hello" })), { echoed: "hello" })
  })
  it("[4] a failure replays the standard failure object", () => {
    assert.deepStrictEqual(responsePayload("x", toolFailure("boom")), {
      status: "tool_execution_failed",
      reason: "boom",
      tool_name: "x"
    })
  })
  it("[5] message is preferred over error", () => {
    assert.deepStrictEqual(responsePayload("x", toolFailure("raw", { message: "nice" })), {
      status: "tool_execution_failed",
      reason: "nice",
      tool_name: "x"
    })
  })
  it("[6] a failure with neither gets the generic reason", () => {
    assert.deepStrictEqual(responsePayload("x", { success: false }), {
      status: "tool_execution_failed",
      reason: "Tool execution failed without specific error",
      tool_name: "x"
    })
  })
  it("[48][49] pre-tool text parts only for non-blank text", () => {
    assert.deepStrictEqual(preToolTextParts("Yeah, let me remember that."), [{ type: "text", text: "Yeah, let me remember that." }])
    assert.strictEqual(preToolTextParts("   "), undefined)
    assert.strictEqual(preToolTextParts(undefined), undefined)
  })
})
