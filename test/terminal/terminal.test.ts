import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Layer, Ref } from "effect"
import { ToolActivity } from "../../src/loop/ToolActivity"
import { UserNotice } from "../../src/loop/UserNotice"
import { toolSuccess } from "../../src/domain/ToolResult"
import type { TurnResult } from "../../src/domain/TurnResult"
import * as S from "../../src/provider/scripted/Script"
import { parseCliArgs } from "../../src/terminal/cliArgs"
import { MediaLibrary } from "../../src/media/MediaLibrary"
import { VisionConfig } from "../../src/config/VisionConfig"
import { turnReportLine } from "../../src/terminal/report"
import { runOnce } from "../../src/terminal/TerminalFront"
import { TerminalOutput } from "../../src/terminal/TerminalOutput"
import { makeTerminalSink } from "../../src/terminal/TerminalSink"
import { queueLayer } from "../chat/harness"
import { constantTool, echoTool } from "../support/tools/testTools"

const persona = { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are a test bot." }

/** Captures what the terminal front prints. */
const captured = Effect.gen(function*() {
  const stdout = yield* Ref.make("")
  const stderr = yield* Ref.make("")
  const layer = Layer.succeed(TerminalOutput, {
    stdout: (text) => Ref.update(stdout, (all) => all + text),
    stderr: (text) => Ref.update(stderr, (all) => all + text),
    colour: false
  })
  return { layer, stdout: Ref.get(stdout), stderr: Ref.get(stderr) }
})

describe("command line (design §5.1)", () => {
  it("parses the interactive, --once and --json forms", () => {
    assert.deepStrictEqual(parseCliArgs([]), Result.succeed({ _tag: "Interactive" }))
    assert.deepStrictEqual(parseCliArgs(["--once", "hi there"]), Result.succeed({ _tag: "Once", text: "hi there", json: false, images: [] }))
    assert.deepStrictEqual(parseCliArgs(["--once", "hi", "--json"]), Result.succeed({ _tag: "Once", text: "hi", json: true, images: [] }))
    assert.deepStrictEqual(parseCliArgs(["--json", "--once=hi"]), Result.succeed({ _tag: "Once", text: "hi", json: true, images: [] }))
    assert.deepStrictEqual(
      parseCliArgs(["--image", "a.png", "--once", "what is this?", "--image=b.jpg"]),
      Result.succeed({ _tag: "Once", text: "what is this?", json: false, images: ["a.png", "b.jpg"] })
    )
    assert.deepStrictEqual(parseCliArgs(["--help"]), Result.succeed({ _tag: "Help" }))
  })

  it("usage errors are one line", () => {
    for (const argv of [["--once"], ["--json"], ["--once", "  "], ["--verbose"], ["--image", "a.png"], ["--once", "hi", "--image"], ["--once", "hi", "--image="]]) {
      const parsed = parseCliArgs(argv)
      assert.isTrue(Result.isFailure(parsed))
      if (Result.isFailure(parsed)) assert.notInclude(parsed.failure, "\n")
    }
  })
})

describe("--json report (design §5.1)", () => {
  it("has exactly the contract keys in order; absent args and usage are null", () => {
    const result: TurnResult = {
      status: "completed",
      text: "done",
      iterations: 2,
      attempts: [{ model: "m", keyIndex: 0, status: "completed" }],
      toolCalls: [{ name: "t", args: undefined, success: false, response: { status: "tool_execution_failed" }, durationMs: 0 }],
      usage: undefined,
      toolResponseDelivered: false
    }
    const line = turnReportLine(result)
    assert.notInclude(line, "\n")
    assert.strictEqual(
      line,
      "{\"status\":\"completed\",\"text\":\"done\",\"iterations\":2,\"attempts\":[{\"model\":\"m\",\"keyIndex\":0,\"status\":\"completed\"}]," +
        "\"toolCalls\":[{\"name\":\"t\",\"args\":null,\"success\":false,\"response\":{\"status\":\"tool_execution_failed\"},\"durationMs\":0}],\"usage\":null,\"context\":null}"
    )
  })

  it("[issue 23] carries what the context budget did: window, last prompt tokens, elided items, the cut message", () => {
    const result: TurnResult = {
      status: "completed",
      text: "done",
      iterations: 3,
      attempts: [{ model: "m", keyIndex: 0, status: "completed" }],
      toolCalls: [],
      usage: undefined,
      toolResponseDelivered: false,
      context: {
        window: 16000,
        windowSource: "setting",
        promptTokens: 12034,
        estimatedPromptTokens: 12500,
        elided: { toolResults: 2, toolExchanges: 0, historyMessages: 3, historyImages: 1, cutToolResults: 0 },
        cutUserMessage: { keptChars: 45000, totalChars: 120000 },
        overflowRefusals: 1,
        summaries: 0
      }
    }
    const report = JSON.parse(turnReportLine(result))
    assert.deepStrictEqual(Object.keys(report), ["status", "text", "iterations", "attempts", "toolCalls", "usage", "context"])
    assert.deepStrictEqual(report.context, {
      window: 16000,
      windowSource: "setting",
      promptTokens: 12034,
      estimatedPromptTokens: 12500,
      elidedItems: 7,
      elided: { toolResults: 2, toolExchanges: 0, historyMessages: 3, historyImages: 1, cutToolResults: 0 },
      cutUserMessage: { keptChars: 45000, totalChars: 120000 },
      overflowRefusals: 1,
      summaries: 0
    })
  })
})

describe("terminal sink", () => {
  it.effect("streams text, puts tool calls and notices on lines of their own", () =>
    Effect.gen(function*() {
      const out = yield* Ref.make("")
      const write = (text: string) => Ref.update(out, (all) => all + text)
      const terminal = yield* makeTerminalSink({ text: write, status: write, shared: true, colour: false })
      const { sink } = terminal
      yield* sink.write("Let me ")
      yield* sink.write("check.")
      assert.strictEqual(yield* sink.endPass("flush"), "Let me check.")
      yield* sink.toolActivity!(ToolActivity.Started({ name: "web_search", args: { query: "cats" } }))
      yield* sink.toolActivity!(ToolActivity.Finished({ name: "web_search", success: true, durationMs: 42 }))
      yield* sink.notice(UserNotice.StillWorking({ iteration: 20 }))
      yield* sink.write("Cats are great.")
      yield* terminal.endLine
      assert.strictEqual(
        yield* Ref.get(out),
        "Let me check.\n⚙ web_search {\"query\":\"cats\"} … ✓ 42 ms\n… still working (step 20); press Ctrl-C to stop\nCats are great.\n"
      )
      assert.strictEqual(yield* sink.delivered, "Let me check.Cats are great.")
    }))
})

describe("--once in process", () => {
  it.effect("[2][5.1] runs one turn with test tools; the report carries the exact replayed payload; exit 0", () =>
    Effect.gen(function*() {
      const output = yield* captured
      const code = yield* runOnce({ text: "echo hello", json: true, persona }).pipe(
        Effect.provide(Layer.mergeAll(MediaLibrary.Default, VisionConfig.make(), 
          queueLayer({ script: [S.callTool("echo_tool", { text: "hello" }, "Echoing. "), S.reply("I echoed: hello")], tools: [echoTool] }),
          output.layer
        ))
      )
      assert.strictEqual(code, 0)
      const stdout = yield* output.stdout
      assert.isTrue(stdout.endsWith("\n") && stdout.split("\n").length === 2, "exactly one line")
      const report = JSON.parse(stdout)
      assert.deepStrictEqual(report, {
        status: "completed",
        text: "I echoed: hello",
        iterations: 2,
        attempts: [{ model: "model-a", keyIndex: 0, status: "completed" }],
        toolCalls: [{ name: "echo_tool", args: { text: "hello" }, success: true, response: { echoed: "hello" }, durationMs: 0 }],
        usage: null,
        context: null
      })
    }))

  it.effect("[5.1] a turn that does not complete exits 1; notices go to stderr, never stdout", () =>
    Effect.gen(function*() {
      const output = yield* captured
      const code = yield* runOnce({ text: "x", json: true, persona }).pipe(
        Effect.provide(Layer.mergeAll(MediaLibrary.Default, VisionConfig.make(), queueLayer({ script: [[S.fail("Auth", "401 bad key", { status: 401 })]] }), output.layer))
      )
      assert.strictEqual(code, 1)
      const report = JSON.parse(yield* output.stdout)
      assert.strictEqual(report.status, "error")
      // The class reaches the screen; the vendor's words go to the log (decision 20).
      assert.include(yield* output.stderr, "the API key was refused")
    }))

  it.effect("[5.1] without --json the reply streams to stdout and tool lines go to stderr", () =>
    Effect.gen(function*() {
      const output = yield* captured
      const code = yield* runOnce({ text: "x", json: false, persona }).pipe(
        Effect.provide(Layer.mergeAll(MediaLibrary.Default, VisionConfig.make(), 
          queueLayer({ script: [S.callTool("noop", {}, "Working. "), S.reply("Done.")], tools: [constantTool("noop", toolSuccess())] }),
          output.layer
        ))
      )
      assert.strictEqual(code, 0)
      assert.strictEqual(yield* output.stdout, "Working. Done.\n")
      assert.include(yield* output.stderr, "⚙ noop")
    }))
})
