import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric, Result, Stream } from "effect"
import { ContextConfig } from "../../src/config/ContextConfig"
import { ProviderError } from "../../src/domain/ProviderError"
import { toolSuccess } from "../../src/domain/ToolResult"
import type { TurnResult } from "../../src/domain/TurnResult"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { providerErrorsTotal } from "../../src/ops/metrics"
import { contextElisions } from "../../src/ops/observedTurns"
import { instrumentModel } from "../../src/ops/instrumentedModel"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { LanguageModel } from "../../src/provider/LanguageModel"
import { type ModelWindow, ModelWindows } from "../../src/provider/ModelWindows"
import * as S from "../../src/provider/scripted/Script"
import { ScriptStep } from "../../src/provider/scripted/Script"
import { toolResultText } from "../../src/provider/toolReplay"
import { makeTool } from "../../src/tools/Tool"
import { Schema } from "effect"
import { withLoopHarness } from "./harness"

const words = (chars: number, seed: string) => {
  let text = ""
  for (let index = 0; text.length < chars; index++) text += `${seed}${index % 7 === 0 ? "." : ""} word${index % 13} `
  return text.slice(0, chars)
}

/** A tool that returns a page of `chars` characters. */
const pageTool = (chars: number) =>
  makeTool({
    name: "read_page",
    description: "Reads a page",
    category: "utility",
    parameters: Schema.Struct({ page: Schema.Number }),
    execute: ({ page }) => Effect.succeed(toolSuccess({ summary: words(chars, `page${page}`) }))
  })

const windowsOf = (tokens: Readonly<Record<string, number>>, learned: Array<readonly [string, number]> = []) =>
  Layer.succeed(ModelWindows, {
    windowOf: (model) => {
      const known = learned.filter(([name]) => name === model).map(([, value]) => value)
      const window: ModelWindow | undefined = known.length > 0
        ? { tokens: Math.min(...known), source: "learned" }
        : tokens[model] === undefined ? undefined : { tokens: tokens[model], source: "setting" }
      return Effect.succeed(window)
    },
    learn: (model, value) => Effect.sync(() => void learned.push([model, value]))
  })

const overflow = (window: number | undefined, promptTokens?: number) =>
  ScriptStep.Fail({
    error: new ProviderError({
      reason: "ContextOverflow",
      provider: "scripted",
      status: 400,
      detail: `This model's maximum context length is ${window ?? "?"} tokens.`,
      overflow: { ...(window === undefined ? {} : { window }), ...(promptTokens === undefined ? {} : { promptTokens }) }
    })
  })

/** The prompt of a request as the fake "server" counts it: 4 characters a token over every text it carries. */
const served = (request: GenerationRequest) =>
  Math.ceil((request.system.length + request.messages.reduce((total, m) => total + m.content.length, 0) +
    request.functionHistory.reduce((total, entry) => total + toolResultText(entry).length + 40, 0)) / 4)

const withTurn = <A, E, R>(
  options: Parameters<typeof withLoopHarness>[0] & { readonly models: ReadonlyArray<string>; readonly keys?: ReadonlyArray<string>; readonly windows?: Layer.Layer<never> },
  body: Parameters<typeof withLoopHarness<A, E, R>>[1]
) =>
  withLoopHarness(options, (harness) =>
    body(harness).pipe(Effect.provide(Layer.mergeAll(RoutePlan.make(options.models, options.keys ?? []), KeyPool.Default, options.windows ?? Layer.empty))))

describe("the context budget in a turn (scripted model) [issue 23]", () => {
  it.effect("a long tool chain on a small window never sends a request over it, and the report says what was elided", () =>
    Effect.gen(function*() {
      const sent: Array<GenerationRequest> = []
      yield* withTurn({
        models: ["small"],
        windows: windowsOf({ small: 16_000 }),
        tools: [pageTool(20_000)],
        script: ({ request }) => {
          sent.push(request)
          const reads = request.functionHistory.length
          // The server reports what it counted, as real servers do.
          const usage = S.usage(served(request), 10)
          return reads < 8 ? [usage, ...S.callTool("read_page", { page: reads })] : [usage, ...S.reply(`read ${reads} pages`)]
        }
      }, () =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "read 8 pages")
          for (const request of sent) assert.isBelow(served(request), 16_000 - 2_000, "every request fits the window less the output reserve")
          const last = sent.at(-1)!
          assert.strictEqual(toolResultText(last.functionHistory.at(-1)!), words(20_000, "page7"), "the newest result is whole")
          assert.include(toolResultText(last.functionHistory[0]!), "characters of this read_page result were left out")
          assert.include(last.messages.at(-1)?.content, "[Context note: to fit the model's context window")
          assert.strictEqual(result.context?.window, 16_000)
          assert.strictEqual(result.context?.windowSource, "setting")
          // Oldest first and only as far as needed: the newest whole, older ones elided once each.
          const shown = last.functionHistory.map((entry) => toolResultText(entry).includes("characters of this read_page result were left out"))
          const elidedCount = shown.filter(Boolean).length
          assert.isAtLeast(elidedCount, 5)
          assert.deepStrictEqual(shown, [...Array(elidedCount).fill(true), ...Array(8 - elidedCount).fill(false)])
          assert.strictEqual(result.context?.elided.toolResults, elidedCount, "each older result counted once, however many passes repeat it")
          assert.strictEqual(result.context?.promptTokens, served(last))
          // Calibrated by what the server reported for the pass before: the estimate is close to its count.
          const estimated = result.context?.estimatedPromptTokens ?? 0
          assert.approximately(estimated, served(last), served(last) * 0.1)
          assert.strictEqual(result.context?.overflowRefusals, 0)
          assert.deepStrictEqual(contextElisions(result), [["tool_result", elidedCount]])
        }))
    }))

  it.effect("a refusal is recovered on the same model: the window is learned, the pass retried smaller, the key never rested", () =>
    Effect.gen(function*() {
      const learned: Array<readonly [string, number]> = []
      const sent: Array<GenerationRequest> = []
      yield* withTurn({
        models: ["wide", "fallback"],
        keys: ["k0", "k1"],
        windows: windowsOf({ wide: 128_000, fallback: 256_000 }, learned),
        tools: [pageTool(40_000)],
        script: ({ request }) => {
          sent.push(request)
          // The server enforces 32,000 tokens, whatever the table said.
          if (served(request) > 32_000) return [overflow(32_000, served(request))]
          const reads = request.functionHistory.length
          return reads < 6 ? S.callTool("read_page", { page: reads }) : S.reply("done reading")
        }
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "done reading")
          assert.deepStrictEqual(result.attempts, [{ model: "wide", keyIndex: 0, status: "completed" }], "no other key, no other model")
          assert.deepStrictEqual(learned, [["wide", 32_000]])
          const pool = yield* KeyPool
          assert.strictEqual((yield* pool.snapshot).size, 0, "no key rests")
          assert.strictEqual(result.context?.overflowRefusals, 1)
          assert.strictEqual(result.context?.window, 32_000)
          assert.strictEqual(result.context?.windowSource, "learned")
          const refusedAt = sent.findIndex((request) => served(request) > 32_000)
          assert.isAtLeast(refusedAt, 0)
          assert.strictEqual(sent[refusedAt + 1]!.functionHistory.length, sent[refusedAt]!.functionHistory.length, "the same pass again")
          assert.isBelow(served(sent[refusedAt + 1]!), 32_000)
          assert.deepStrictEqual(yield* collected.notices, [], "nothing to tell the user")
        }))
    }))

  it.effect("at most two retries; then only a later model with a larger window is tried, and no key rests", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      yield* withTurn({
        models: ["small", "same", "large"],
        keys: ["k0", "k1"],
        windows: windowsOf({ small: 16_000, same: 16_000, large: 64_000 }),
        script: ({ request }) => {
          asked.push(request.model)
          // `small` refuses whatever it is sent, and says nothing of its window.
          return request.model === "small" ? [overflow(undefined)] : S.reply(`answered by ${request.model}`)
        }
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.deepStrictEqual(asked, ["small", "small", "small", "large"])
          assert.strictEqual(result.status, "completed")
          assert.deepStrictEqual(result.attempts.map((attempt) => [attempt.model, attempt.keyIndex]), [["small", 0], ["large", 0]])
          assert.strictEqual((yield* (yield* KeyPool).snapshot).size, 0)
          const notice = (yield* collected.notices)[0]
          assert.strictEqual(notice?._tag, "FallbackUsed")
          if (notice?._tag === "FallbackUsed") assert.deepStrictEqual(notice.failures, [{ model: "small", reason: "context_too_long" }])
          assert.strictEqual(result.context?.overflowRefusals, 3)
        }))
    }))

  it.effect("no later model with a larger window: the turn ends with a context_too_long notice", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      yield* withTurn({
        models: ["small", "smaller"],
        windows: windowsOf({ small: 16_000, smaller: 8_000 }),
        script: ({ request }) => {
          asked.push(request.model)
          return [overflow(16_000)]
        }
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.deepStrictEqual(asked, ["small", "small", "small"])
          assert.strictEqual(result.status, "error")
          assert.deepStrictEqual(yield* collected.notices, [{ _tag: "ProviderFailed", model: "small", reason: "context_too_long" }])
        }))
    }))

  it.effect("a message longer than the window is cut with a marker; the user is told, and operators in the thought log", () =>
    Effect.gen(function*() {
      const message = `${words(120_000, "log")} -- so what is wrong?`
      const sent: Array<GenerationRequest> = []
      yield* withTurn({
        models: ["small"],
        windows: windowsOf({ small: 16_000 }),
        contextItems: [{ role: "user", content: "earlier" }, { role: "user", content: message }],
        script: ({ request }) => {
          sent.push(request)
          return S.reply("it is the disk")
        }
      }, ({ collected, tools }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "completed")
          const question = sent[0]!.messages.find((item) => item.content.startsWith("log"))!
          assert.isBelow(question.content.length, 60_000)
          assert.isTrue(question.content.endsWith("-- so what is wrong?"))
          assert.include(question.content, "characters of this message were left out")
          assert.isBelow(served(sent[0]!), 16_000)
          const notices = yield* collected.notices
          assert.strictEqual(notices.length, 1)
          assert.strictEqual(notices[0]?._tag, "MessageShortened")
          const hidden = (yield* tools.thoughtLog.notices).filter((notice) => notice.kind === "context_cut")
          assert.strictEqual(hidden.length, 1)
          assert.include(hidden[0]?.description, `of the message's ${message.length} characters`)
          assert.strictEqual(result.context?.cutUserMessage?.totalChars, message.length)
          assert.deepStrictEqual(contextElisions(result).map(([kind]) => kind), ["history_message", "cut_user_message"])
        }))
    }))

  it.effect("CONTEXT_COMPACTION=summarize: when elision is not enough, one bounded request summarises the oldest calls, and the summary replaces them", () =>
    Effect.gen(function*() {
      const summaryRequests: Array<GenerationRequest> = []
      const sent: Array<GenerationRequest> = []
      yield* withTurn({
        models: ["small"],
        windows: windowsOf({ small: 8_192 }),
        tools: [pageTool(3_000)],
        script: ({ request }) => {
          if (request.tools.length === 0 && request.functionHistory.length === 0 && request.messages[0]?.content.includes("Call 1:")) {
            summaryRequests.push(request)
            return S.reply("Pages 0 to n: nothing of note.")
          }
          sent.push(request)
          const summarised = /\[Summary of the first (\d+) tool calls/.exec(request.messages.map((m) => m.content).join("\n"))
          const reads = request.functionHistory.length + Number(summarised?.[1] ?? 0)
          return reads < 40 ? S.callTool("read_page", { page: reads }) : S.reply(`read ${reads} pages`)
        }
      }, () =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "read 40 pages")
          assert.isAbove(summaryRequests.length, 0)
          const asked = summaryRequests[0]!
          assert.deepStrictEqual(asked.tools, [], "the summary request declares no tools")
          assert.isDefined(asked.maxOutputTokens)
          assert.isAtMost(asked.maxOutputTokens!, 1_024)
          const last = sent.at(-1)!
          assert.include(last.messages.map((m) => m.content).join("\n"), "Pages 0 to n: nothing of note.")
          assert.isBelow(last.functionHistory.length, 40, "the summarised calls are no longer replayed")
          for (const request of sent) assert.isBelow(served(request), 8_192)
          assert.strictEqual(result.context?.summaries, summaryRequests.length)
        }))
    }).pipe(Effect.provide(ContextConfig.make({ compaction: "summarize" }))))

  it.effect("waiting for a model's window yields to /kill: the turn stops at once, the model never asked", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const hanging = Layer.succeed(ModelWindows, { windowOf: () => Effect.never, learn: () => Effect.void })
      yield* withTurn({ models: ["m"], windows: hanging, script: ({ request }) => {
        asked.push(request.model)
        return S.reply("too late")
      } }, ({ signals }) =>
        Effect.gen(function*() {
          const turn = yield* Effect.forkChild(runGenerationTurn())
          yield* Effect.yieldNow
          yield* signals.kill({ requesterId: "user-1" })
          const result = yield* Fiber.join(turn)
          assert.strictEqual(result.status, "stopped_by_user")
          assert.deepStrictEqual(asked, [])
        }))
    }))

  it.effect("without a known window the request goes as it is and the report has no context", () =>
    withTurn({ models: ["m"], script: [S.reply("fine")] }, () =>
      Effect.gen(function*() {
        const result: TurnResult = yield* runGenerationTurn()
        assert.strictEqual(result.status, "completed")
        assert.isUndefined(result.context)
      })).pipe(Effect.provide(ContextConfig.make())))
})

describe("context metrics [issue 23]", () => {
  it.effect("a context-length refusal is not counted as a provider error", () =>
    Effect.gen(function*() {
      const counter = Metric.withAttributes(providerErrorsTotal, { reason: "ContextOverflow" })
      const before = (yield* Metric.value(counter)).count
      const refusing = LanguageModel.of({
        name: "refusing",
        stream: () => Stream.fail(new ProviderError({ reason: "ContextOverflow", provider: "refusing", detail: "too long", status: 400 }))
      })
      const model = instrumentModel(refusing, { tracing: false, metrics: true })
      const ended = yield* Effect.result(Stream.runDrain(model.stream({ model: "m", apiKey: undefined, system: "", messages: [], tools: [], functionHistory: [] })))
      assert.isTrue(Result.isFailure(ended))
      assert.strictEqual((yield* Metric.value(counter)).count, before)
    }))
})
