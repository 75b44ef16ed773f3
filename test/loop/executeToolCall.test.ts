import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { echoTool } from "../support/tools/testTools"
import { call, functionCallPass, makeToolCallHarness, testAttempt } from "../support/tools/toolCallHarness"

describe("executeToolCall: happy path", () => {
  it.effect("[2] dispatches echo_tool once and replays its data", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [echoTool] })
      const outcome = yield* h.run(
        executeToolCall({ pass: functionCallPass({ name: "echo_tool", args: { text: "hello" } }), iteration: 0, attempt: testAttempt })
      )
      assert.strictEqual(outcome._tag, "History")
      if (outcome._tag !== "History") return
      assert.strictEqual(outcome.success, true)
      assert.deepStrictEqual(outcome.historyEntry.functionCall, call("echo_tool", { text: "hello" }))
      assert.deepStrictEqual(outcome.historyEntry.functionResponse, { name: "echo_tool", response: { result: { echoed: "hello" } } })
      const history = yield* h.registry.executionHistory()
      assert.strictEqual(history.length, 1)
      const logs = yield* h.logs.matching("Function call completed: echo_tool")
      assert.strictEqual(logs[0]?.level, "INFO")
    }))
})
