import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { logTurnSummary } from "../../src/chat/logTurnSummary"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { makeUsage } from "../../src/domain/TokenUsage"
import { toolSuccess } from "../../src/domain/ToolResult"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import * as S from "../../src/provider/scripted/Script"
import { turnReport } from "../../src/terminal/report"
import { makeLogCapture } from "../support/tools/logCapture"
import { constantTool } from "../support/tools/testTools"
import { withLoopHarness } from "./harness"

const usage = (counts: Parameters<typeof makeUsage>[0]) => S.ScriptStep.Emit({ event: ProviderEvent.Usage({ usage: makeUsage(counts) }) })

describe("usage of a turn (issue 14 item 5)", () => {
  it.effect("sums input, output, cached, cache-write and reasoning tokens over every pass of every attempt, failed ones included", () =>
    withLoopHarness({
      tools: [constantTool("step", toolSuccess())],
      script: ({ request, index }) =>
        request.model === "primary"
          ? index === 0
            ? [usage({ inputTokens: 100, outputTokens: 10, cachedInputTokens: 60, reasoningTokens: 4 }), S.toolCall("step")]
            : [usage({ inputTokens: 120, outputTokens: 1, cacheWriteTokens: 20 }), S.fail("Server", "upstream 502", { status: 502 })]
          : [S.text("done"), usage({ inputTokens: 130, outputTokens: 5, cachedInputTokens: 110, reasoningTokens: 2 })]
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "completed")
        assert.deepStrictEqual(result.attempts.map((attempt) => attempt.status), ["error", "completed"])
        assert.strictEqual(result.iterations, 3)
        assert.deepStrictEqual(turnReport(result).usage, {
          inputTokens: 350,
          outputTokens: 16,
          totalTokens: 366,
          cachedInputTokens: 170,
          cacheWriteTokens: 20,
          reasoningTokens: 6
        })
      }).pipe(Effect.provide(Layer.merge(RoutePlan.make(["primary", "fallback"], []), KeyPool.Default)))))
})

describe("logTurnSummary", () => {
  it.effect("one info line with the summed usage, no conversation text", () =>
    Effect.gen(function*() {
      const capture = yield* makeLogCapture
      yield* capture.capture(logTurnSummary({
        status: "completed",
        text: "secret reply text",
        iterations: 3,
        attempts: [{ model: "m", keyIndex: 0, status: "completed" }],
        toolCalls: [],
        usage: makeUsage({ inputTokens: 350, outputTokens: 16, cachedInputTokens: 170, cacheWriteTokens: 20, reasoningTokens: 6 }),
        toolResponseDelivered: false
      }))
      const [line] = yield* capture.matching("turn finished")
      assert.strictEqual(line?.level, "INFO")
      assert.deepStrictEqual(line?.annotations, {
        status: "completed",
        iterations: 3,
        attempts: 1,
        toolCalls: 0,
        inputTokens: 350,
        outputTokens: 16,
        cachedInputTokens: 170,
        cacheWriteTokens: 20,
        reasoningTokens: 6
      })
      assert.notInclude(JSON.stringify(yield* capture.logs), "secret reply text")
    }))
})
