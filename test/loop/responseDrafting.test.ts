import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import { pendingSleeps } from "../support/testClockSleeps"
import { DraftingConfig } from "../../src/config/DraftingConfig"
import { DeliveryError } from "../../src/domain/DeliveryError"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { PENDING_NARRATION_NOTE } from "../../src/loop/drafting/authorNotes"
import { HELD_PROSE_MAX_CHARS, MAX_TOOL_REVIEWS } from "../../src/loop/drafting/DraftState"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { runToolLoop } from "../../src/loop/runToolLoop"
import { draftingHooks } from "../../src/loop/drafting/draftingHooks"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { constantTool, makeHangingTool, makeRecordingTool } from "../support/tools/testTools"
import { testAttempt } from "../support/tools/toolCallHarness"
import { type LoopHarness, withLoopHarness } from "./harness"

/**
 * Response Drafting (spec §2.10, §3 step 5b, issue 14): the author's prose is held and a
 * reviewer, scripted separately by model name, approves, revises or cancels it before the
 * sink sees any of it. Every timer runs on the TestClock.
 */

const AUTHOR = testAttempt.model
const REVIEWER = "reviewer"
const attempt = { ...testAttempt, provider: "scripted" }
const loop = () => runToolLoop({ attempt, apiKey: undefined, hooks: draftingHooks() })

const verdict = (value: "approve" | "revise" | "cancel", feedback?: string): S.ScriptedPass =>
  S.reply(JSON.stringify(feedback === undefined ? { verdict: value } : { verdict: value, feedback }))
const approve = verdict("approve")

/** Drafting on, the reviewer a model of its own. */
const drafted = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, DraftingConfig.make({ reviewModel: REVIEWER }))

const requestsOf = (model: string) =>
  Effect.map(Effect.flatMap(ScriptedProbe, (probe) => probe.requests), (all) => all.filter((request) => request.model === model))

const packetOf = (request: GenerationRequest | undefined) => request?.messages.map((message) => message.content).join("\n") ?? ""

/** Waits (without moving the clock) until some fiber sleeps on the TestClock until `at` (ms). */
const untilSleepingUntil = (at: number) =>
  Effect.repeat(Effect.andThen(Effect.yieldNow, pendingSleeps), { until: (sleeps) => sleeps.some((wake) => wake === at) })

const deliveredTexts = (events: ReadonlyArray<{ readonly _tag: string; readonly text?: string }>) =>
  events.flatMap((event) => (event._tag === "Delivered" && event.text !== undefined ? [event.text] : []))

describe("Response Drafting: completing the pending response (spec §2.10)", () => {
  it.effect("§2.10 approve: nothing reaches the sink while the reviewer decides; then the draft is delivered", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Hello there.")], [REVIEWER]: [[S.sleep("5 seconds"), ...approve]] })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* collected.delivered, "", "held while the reviewer has not answered")
        yield* TestClock.adjust("4 seconds")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["completed", "Hello there."])
        assert.strictEqual(yield* collected.delivered, "Hello there.")
        const [review] = yield* requestsOf(REVIEWER)
        assert.include(packetOf(review), "<draft status=\"complete\">\nHello there.\n</draft>")
        assert.deepStrictEqual(review?.tools, [], "the reviewer is offered no tools")
      })).pipe(drafted))

  it.effect("§2.10 drafting off (the default): the reply streams and no reviewer is asked", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [S.reply("Hello there.")] }) }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(yield* collected.delivered, "Hello there.")
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 0)
        assert.strictEqual((yield* requestsOf(AUTHOR)).length, 1, "nobody was asked to review")
      })))

  it.effect("§2.10 revise: the pending reply is cleared, the next pass gets the feedback and the previous draft, the tool outcome is kept and the tool ran once", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ answer: 42 })))
      yield* withLoopHarness({
        tools: [lookup.tool],
        script: S.byModel({
          [AUTHOR]: [S.callTool("lookup", { q: "x" }, "Let me look. "), S.reply("It is about 40."), S.reply("It is 42.")],
          [REVIEWER]: [approve, verdict("revise", "The tool said 42, not about 40."), approve]
        })
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual([result.status, result.text], ["completed", "It is 42."])
          assert.deepStrictEqual(deliveredTexts(yield* collected.events), ["It is 42."], "the rejected draft and its narration were never shown")
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1, "the tool ran once")
          const authored = yield* requestsOf(AUTHOR)
          const revised = authored[2]
          assert.deepStrictEqual(revised?.functionHistory.map((entry) => entry.functionResponse.response.result), [{ answer: 42 }])
          assert.isUndefined(revised?.functionHistory[0]?.preToolCallTextParts, "the unshown narration is not replayed as said")
          const note = packetOf(revised)
          assert.include(note, "The tool said 42, not about 40.")
          assert.include(note, "Let me look. \n\nIt is about 40.", "the previous draft, narration included")
          assert.isUndefined(revised?.assistantPrefill, "nothing carried as the start of the answer")
          // Before the revision, the narration was pending and the author was told so.
          assert.include(packetOf(authored[1]), PENDING_NARRATION_NOTE)
          assert.strictEqual(authored[1]?.functionHistory[0]?.preToolCallTextParts?.[0]?.text, "Let me look. ")
        }))
    }).pipe(drafted))

  it.effect("§2.10 approve after tools: the narration and the answer are delivered in order, as separate parts", () =>
    withLoopHarness({
      tools: [constantTool("lookup", toolSuccess({ answer: 42 }))],
      script: S.byModel({ [AUTHOR]: [S.callTool("lookup", {}, "Let me look."), S.reply("It is 42.")], [REVIEWER]: [approve, approve] })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Let me look.\n\nIt is 42."])
        assert.deepStrictEqual(deliveredTexts(yield* collected.events), ["Let me look.", "It is 42."])
        assert.include(packetOf((yield* requestsOf(REVIEWER))[1]), "Let me look.\n\nIt is 42.")
      })).pipe(drafted))

  it.effect("§2.10 revise with no revision left: the second draft is delivered as drafted (2 reviews, 1 revision a turn)", () =>
    withLoopHarness({
      script: S.byModel({
        [AUTHOR]: [S.reply("Draft one."), S.reply("Draft two."), S.reply("never")],
        [REVIEWER]: [verdict("revise", "Shorter."), verdict("revise", "Even shorter."), approve]
      })
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Draft two."])
        assert.strictEqual(yield* collected.delivered, "Draft two.")
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 2)
        assert.strictEqual((yield* requestsOf(AUTHOR)).length, 2)
        const titles = (yield* tools.thoughtLog.notices).map((notice) => notice.title)
        assert.include(titles, "Revision requested, none left: reply delivered as drafted")
      })).pipe(drafted))

  it.effect("§2.10 cancel without a follow-up: nothing is delivered, stopped_by_user, empty text, the stop handled as the loop does", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Something unfit.")], [REVIEWER]: [[S.sleep("1 second"), ...verdict("cancel", "Unfit.")]] })
    }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        // A stop registered (not a kill) while the reviewer works: its stop response is queued.
        yield* signals.requestStop({ requesterId: "u1", stopContext: { requesterId: "u1", originalMessageId: "m9" } })
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.deepStrictEqual(yield* stopResponses, [{ requesterId: "u1", originalMessageId: "m9" }])
      })).pipe(drafted))

  it.effect("§2.10 cancel with a follow-up registered: follow_up_interrupt, nothing delivered", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Something.")], [REVIEWER]: [[S.sleep("1 second"), ...verdict("cancel")]] })
    }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* signals.requestFollowUp
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["follow_up_interrupt", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.deepStrictEqual(yield* stopResponses, [])
      })).pipe(drafted))

  it.effect("a follow-up while the reviewer decides: follow_up_interrupt, the review is interrupted, nothing delivered, no stop response", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("An outdated answer.")], [REVIEWER]: [[S.sleep("5 seconds"), ...approve]] })
    }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* signals.requestFollowUp
        // Past the moment the reviewer would have approved.
        yield* TestClock.adjust("5 seconds")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["follow_up_interrupt", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.strictEqual(yield* probe.awaitFinalized(1), "interrupted", "the reviewer's stream was interrupted, not read to its end")
        assert.deepStrictEqual(yield* stopResponses, [])
        assert.lengthOf(yield* requestsOf(REVIEWER), 1, "no second review")
      })).pipe(drafted))

  it.effect("a stop registered (not a /kill) while the reviewer decides: its approval delivers nothing, stopped_by_user, the stop response queued", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Held.")], [REVIEWER]: [[S.sleep("1 second"), ...approve]] })
    }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* signals.requestStop({ requesterId: "u1", stopContext: { requesterId: "u1", originalMessageId: "m9" } })
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.deepStrictEqual(yield* stopResponses, [{ requesterId: "u1", originalMessageId: "m9" }])
      })).pipe(drafted))

  it.effect("§2.10 the first non-completed delivery wins: a destination that refuses the approved reply ends error / delivery_failed", () =>
    withLoopHarness({
      tools: [constantTool("lookup", toolSuccess())],
      script: S.byModel({ [AUTHOR]: [S.callTool("lookup", {}, "Part one."), S.reply("Part two.")], [REVIEWER]: [approve, approve] }),
      sink: { failFrom: { delivery: 1, error: new DeliveryError({ reason: "channel_deleted", detail: "Unknown Channel" }) } }
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.reason, result.text], ["error", "delivery_failed", "Part one."])
        assert.strictEqual(yield* collected.delivered, "Part one.")
        assert.include((yield* tools.thoughtLog.notices).map((notice) => notice.kind), "delivery_failed")
      })).pipe(drafted))

  it.effect("§2.10 a stop registered between parts stops the delivery: stopped_by_user with what was shown", () =>
    withLoopHarness({
      tools: [constantTool("lookup", toolSuccess())],
      script: S.byModel({ [AUTHOR]: [S.callTool("lookup", {}, "Part one."), S.reply("Part two.")], [REVIEWER]: [approve, approve] }),
      sink: { deliveryDelay: "1 second" }
    }, ({ collected, signals }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        // The response review (call 3) approves; the first part's delivery then takes 1 s.
        yield* probe.awaitCall(3)
        yield* untilSleepingUntil(1000)
        yield* signals.requestStop({ requesterId: "u1" })
        yield* TestClock.adjust("2 seconds")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", "Part one."])
        assert.strictEqual(yield* collected.delivered, "Part one.")
      })).pipe(drafted))

  it.effect("§2.10 a tool-only turn invents no prose: endTurn without text completes empty, no reviewer asked", () =>
    withLoopHarness({
      tools: [constantTool("voice", toolSuccess(undefined, { endTurn: true, responseDelivered: true }))],
      script: S.byModel({ [AUTHOR]: [S.callTool("voice")], [REVIEWER]: [approve] })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.toolResponseDelivered], ["completed", "", true])
        assert.strictEqual(yield* collected.delivered, "")
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 1, "only the tool request was reviewed")
      })).pipe(drafted))

  it.effect("§2.10 a settled empty follow-up with pending narration: reviewed, then delivered", () =>
    withLoopHarness({
      tools: [constantTool("save_note", toolSuccess())],
      script: S.byModel({ [AUTHOR]: [S.callTool("save_note", {}, "Saved it."), [S.finish("stop")]], [REVIEWER]: [approve, approve] })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Saved it."])
        assert.strictEqual(yield* collected.delivered, "Saved it.")
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 2)
      })).pipe(drafted))

  it.effect("§2.10 the reviewer's tokens count toward the attempt's usage", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [[S.text("Hi."), S.usage(10, 5), S.finish("stop")]], [REVIEWER]: [[...approve, S.usage(100, 7)]] })
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual(result.usage, { inputTokens: 110, outputTokens: 12, totalTokens: 122 })
      })).pipe(drafted))

  it.effect("§2.10 RESPONSE_REVIEW_MODEL unset: the attempt's own model reviews", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [S.reply("Hi."), approve] }) }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(yield* collected.delivered, "Hi.")
        const requests = yield* requestsOf(AUTHOR)
        assert.strictEqual(requests.length, 2)
        assert.include(requests[1]?.system ?? "", "\"verdict\"")
      })).pipe(Effect.provide(DraftingConfig.make())))
})

describe("Response Drafting: scenarios 29 and 52 under drafting", () => {
  it.effect("[29] endTurn after pre-tool text \"Done!\": reviewed, then \"Done!\" delivered, completed, no further pass", () =>
    withLoopHarness({
      tools: [constantTool("finish_it", toolSuccess(undefined, { endTurn: true }))],
      script: S.byModel({ [AUTHOR]: [S.callTool("finish_it", {}, "Done!"), S.reply("never")], [REVIEWER]: [approve, [S.sleep("2 seconds"), ...approve]] })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(2)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* collected.delivered, "", "\"Done!\" is held until the reviewer approves")
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Done!", 1])
        assert.strictEqual(yield* collected.delivered, "Done!")
        assert.strictEqual((yield* requestsOf(AUTHOR)).length, 1)
        assert.include(packetOf((yield* requestsOf(REVIEWER))[1]), "Done!")
      })).pipe(drafted))

  it.effect("[52] a /kill mid-pass: stopped_by_user, the held \"partial\" is never posted, the stop response queued at the front", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [[S.text("partial"), S.hang]], [REVIEWER]: [approve] }) }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("1 second")
        yield* signals.kill({ requesterId: "u1", stopContext: { requesterId: "u1", originalMessageId: "m9" } })
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.deepStrictEqual(yield* stopResponses, [{ requesterId: "u1", originalMessageId: "m9" }])
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 0)
      })).pipe(drafted))

  it.effect("[52] without a stop context the stop request is cleared (it must not abort the next turn)", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [[S.text("partial"), S.hang]] }) }, ({ signals, stopResponses }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("1 second")
        yield* signals.requestStop({ requesterId: "u1" })
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.status, "stopped_by_user")
        assert.deepStrictEqual(yield* stopResponses, [])
        assert.strictEqual((yield* signals.current)._tag, "None")
      })).pipe(drafted))
})

describe("Response Drafting: every review is bounded (stream budgets, /kill) and a bad reviewer never costs the reply", () => {
  const budgets = { firstTokenTimeout: Duration.seconds(30), streamInactivityTimeout: Duration.seconds(20) }

  it.effect("/kill during the response review ends the turn stopped_by_user at once; the reviewer's stream is interrupted", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [S.reply("Held.")], [REVIEWER]: [[S.hang]] }), loop: budgets }, ({ collected, signals, stopResponses }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* signals.kill({ requesterId: "u1", stopContext: { requesterId: "u1" } })
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", ""])
        assert.strictEqual(yield* collected.delivered, "")
        assert.strictEqual(yield* probe.awaitFinalized(1), "interrupted")
        assert.deepStrictEqual(yield* stopResponses, [{ requesterId: "u1" }])
      })).pipe(drafted))

  it.effect("a reviewer that never answers: after the first-token budget the draft is delivered unreviewed, with a thought-log notice", () =>
    withLoopHarness({ script: S.byModel({ [AUTHOR]: [S.reply("Held.")], [REVIEWER]: [[S.hang]] }), loop: budgets }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(loop())
        yield* probe.awaitCall(1)
        yield* TestClock.adjust("29 seconds")
        assert.strictEqual(yield* collected.delivered, "")
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["completed", "Held."])
        assert.strictEqual(yield* collected.delivered, "Held.")
        const notices = yield* tools.thoughtLog.notices
        assert.deepStrictEqual(notices.map((notice) => notice.kind), ["draft_unreviewed"])
        assert.include(notices[0]?.description ?? "", "first_token_timeout")
        assert.strictEqual(yield* probe.awaitFinalized(1), "interrupted")
      })).pipe(drafted))

  it.effect("a reviewer that goes silent mid-answer: after the inactivity budget the draft is delivered unreviewed", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Held.")], [REVIEWER]: [[S.text("{\"verdict\":"), S.hang]] }),
      loop: budgets
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("19 seconds")
        assert.strictEqual(yield* collected.delivered, "")
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(yield* collected.delivered, "Held.")
        assert.include((yield* tools.thoughtLog.notices)[0]?.description ?? "", "inactivity_timeout")
      })).pipe(drafted))

  const garbage: ReadonlyArray<readonly [string, S.ScriptedPass]> = [
    ["prose", S.reply("Looks good to me!")],
    ["an unknown verdict", S.reply("{\"verdict\":\"maybe\"}")],
    ["revise without feedback", S.reply("{\"verdict\":\"revise\"}")],
    ["two objects", S.reply("{\"verdict\":\"approve\"}{\"verdict\":\"cancel\"}")],
    ["a tool call", S.callTool("delete_everything")],
    ["an endless answer", [S.text("{\"verdict\":\"approve\",\"feedback\":\""), ...Array.from({ length: 20 }, () => S.text("x".repeat(500))), S.hang]],
    ["a provider error", [S.fail("Server", "reviewer down")]]
  ]
  for (const [what, answer] of garbage) {
    it.effect(`a reviewer answering ${what}: the draft is delivered unreviewed, with a thought-log notice, and nothing loops`, () =>
      withLoopHarness({ script: S.byModel({ [AUTHOR]: [S.reply("Held.")], [REVIEWER]: [answer] }), loop: budgets }, ({ collected, tools }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual([result.status, result.text], ["completed", "Held."])
          assert.strictEqual(yield* collected.delivered, "Held.")
          assert.deepStrictEqual((yield* tools.thoughtLog.notices).map((notice) => notice.kind), ["draft_unreviewed"])
          assert.strictEqual((yield* requestsOf(REVIEWER)).length, 1)
          assert.strictEqual((yield* requestsOf(AUTHOR)).length, 1)
        })).pipe(drafted))
  }

  it.effect("a fenced JSON verdict is read (```json … ```)", () =>
    withLoopHarness({
      script: S.byModel({ [AUTHOR]: [S.reply("Draft one."), S.reply("Draft two.")], [REVIEWER]: [S.reply("```json\n{\"verdict\":\"revise\",\"feedback\":\"More.\"}\n```"), approve] })
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.text, "Draft two.")
        assert.strictEqual(yield* collected.delivered, "Draft two.")
        assert.notInclude((yield* tools.thoughtLog.notices).map((notice) => notice.kind), "draft_unreviewed")
      })).pipe(drafted))

  it.effect("held prose is bounded: output beyond the ceiling is dropped and the reviewer told the draft was cut", () =>
    withLoopHarness({
      script: S.byModel({
        [AUTHOR]: [[...Array.from({ length: 30 }, () => S.text("y".repeat(1000))), S.finish("stop")]],
        [REVIEWER]: [approve]
      })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual((yield* collected.delivered).length, HELD_PROSE_MAX_CHARS)
        assert.include(packetOf((yield* requestsOf(REVIEWER))[0]), "pending_cut_at_length_limit")
      })).pipe(drafted))
})

describe("Response Drafting: the tool checkpoint (spec §3 step 5b)", () => {
  it.effect("§3 5b a reviewer revise refuses the request before dispatch: review_rejected, not executed, correction allowed", () =>
    Effect.gen(function*() {
      const danger = yield* makeRecordingTool("danger", () => Effect.succeed(toolSuccess()))
      yield* withLoopHarness({
        tools: [danger.tool],
        script: S.byModel({ [AUTHOR]: [S.callTool("danger", { target: "all" }), S.reply("I did not do it.")], [REVIEWER]: [verdict("revise", "Nobody asked to touch everything."), approve] })
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual((yield* Ref.get(danger.calls)).length, 0)
          const response = result.toolCalls[0]?.response as Record<string, unknown> | undefined
          assert.strictEqual(result.toolCalls[0]?.success, false)
          assert.deepStrictEqual(
            [response?.["status"], response?.["findings"], response?.["actionExecuted"], response?.["correctionAllowed"]],
            ["review_rejected", "Nobody asked to touch everything.", false, true]
          )
          assert.isString(response?.["reason"])
          const [toolReview] = yield* requestsOf(REVIEWER)
          assert.include(packetOf(toolReview), "<tool_request name=\"danger\">")
          assert.include(packetOf(toolReview), "\"target\": \"all\"")
          const authored = yield* requestsOf(AUTHOR)
          assert.deepStrictEqual(authored[1]?.functionHistory[0]?.functionResponse.response.result, response)
        }))
    }).pipe(drafted))

  it.effect("§3 5b an identical rejected request never executes and is not reviewed again", () =>
    Effect.gen(function*() {
      const danger = yield* makeRecordingTool("danger", () => Effect.succeed(toolSuccess()))
      yield* withLoopHarness({
        tools: [danger.tool],
        script: S.byModel({
          [AUTHOR]: [S.callTool("danger", { target: "all", mode: "hard" }), S.callTool("danger", { mode: "hard ", target: "all" }), S.reply("Fine.")],
          [REVIEWER]: [verdict("revise", "No."), approve]
        })
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual((yield* Ref.get(danger.calls)).length, 0)
          assert.strictEqual((yield* requestsOf(REVIEWER)).length, 2, "one tool review, one response review")
          assert.deepStrictEqual(result.toolCalls.map((call) => (call.response as { status?: string }).status), ["review_rejected", "review_rejected"])
        }))
    }).pipe(drafted))

  it.effect("§3 5b an identical previously-successful request is reused, not re-executed (after a revision too)", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ answer: 42 })))
      yield* withLoopHarness({
        tools: [lookup.tool],
        script: S.byModel({
          [AUTHOR]: [S.callTool("lookup", { q: "x" }), S.reply("About 40."), S.callTool("lookup", { q: " x" }), S.reply("42.")],
          [REVIEWER]: [approve, verdict("revise", "Check the number."), approve]
        })
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual([result.status, result.text], ["completed", "42."])
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1, "the reused request did not run")
          assert.deepStrictEqual(result.toolCalls.map((call) => [call.success, call.response]), [[true, { answer: 42 }], [true, { answer: 42 }]])
          assert.strictEqual((yield* requestsOf(REVIEWER)).length, 3, "the reused request was not reviewed")
          const last = (yield* requestsOf(AUTHOR))[3]
          assert.deepStrictEqual(last?.functionHistory.map((entry) => entry.functionResponse.response.result), [{ answer: 42 }, { answer: 42 }])
        }))
    }).pipe(drafted))

  it.effect("§2.7 review rejections neither count toward nor reset the consecutive-error cap", () =>
    Effect.gen(function*() {
      const flaky = yield* makeRecordingTool("flaky", () => Effect.succeed(toolFailure("flaky failed")))
      const danger = yield* makeRecordingTool("danger", () => Effect.succeed(toolSuccess()))
      yield* withLoopHarness({
        tools: [flaky.tool, danger.tool],
        loop: { maxConsecutiveToolErrors: 3 },
        script: S.byModel({
          [AUTHOR]: [S.callTool("flaky", { n: 1 }), S.callTool("danger"), S.callTool("flaky", { n: 2 }), S.callTool("flaky", { n: 3 }), S.reply("never")],
          [REVIEWER]: [approve, verdict("revise", "No."), approve, approve, approve]
        })
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          // Counted, the cap (3) would hit at the second failure (3 passes); reset, the turn would complete.
          assert.deepStrictEqual([result.status, result.passes.length], ["error", 4])
          assert.strictEqual((yield* Ref.get(flaky.calls)).length, 3)
          assert.strictEqual((yield* Ref.get(danger.calls)).length, 0)
        }))
    }).pipe(drafted))

  it.effect("§3 5b budgets: 2 refusals a turn invite a correction, later ones do not; cancel never does", () =>
    withLoopHarness({
      tools: [constantTool("danger", toolSuccess())],
      script: S.byModel({
        [AUTHOR]: [S.callTool("danger", { n: 1 }), S.callTool("danger", { n: 2 }), S.callTool("danger", { n: 3 }), S.reply("Giving up.")],
        [REVIEWER]: [verdict("cancel"), verdict("revise", "No."), verdict("revise", "No."), approve]
      })
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.deepStrictEqual(result.toolCalls.map((call) => (call.response as { correctionAllowed?: boolean }).correctionAllowed), [false, true, true])
      })).pipe(drafted))

  it.effect("§3 5b budgets: the correction budget is 2 — a third revise is refused without a correction", () =>
    withLoopHarness({
      tools: [constantTool("danger", toolSuccess())],
      script: S.byModel({
        [AUTHOR]: [S.callTool("danger", { n: 1 }), S.callTool("danger", { n: 2 }), S.callTool("danger", { n: 3 }), S.reply("Giving up.")],
        [REVIEWER]: [verdict("revise", "No."), verdict("revise", "No."), verdict("revise", "No."), approve]
      })
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual(result.toolCalls.map((call) => (call.response as { correctionAllowed?: boolean }).correctionAllowed), [true, true, false])
      })).pipe(drafted))

  it.effect(`§3 5b budgets: ${MAX_TOOL_REVIEWS} tool reviews a turn; later requests run unreviewed (one notice)`, () =>
    Effect.gen(function*() {
      const probe = yield* makeRecordingTool("probe", () => Effect.succeed(toolSuccess()))
      yield* withLoopHarness({
        tools: [probe.tool],
        script: S.byModel({
          [AUTHOR]: [...Array.from({ length: MAX_TOOL_REVIEWS + 2 }, (_, n) => S.callTool("probe", { n })), S.reply("Done.")],
          [REVIEWER]: [...Array.from({ length: MAX_TOOL_REVIEWS }, () => approve), approve]
        })
      }, ({ tools }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual((yield* Ref.get(probe.calls)).length, MAX_TOOL_REVIEWS + 2)
          assert.strictEqual((yield* requestsOf(REVIEWER)).length, MAX_TOOL_REVIEWS + 1)
          const unreviewed = (yield* tools.thoughtLog.notices).filter((notice) => notice.kind === "draft_unreviewed")
          assert.strictEqual(unreviewed.length, 1)
        }))
    }).pipe(drafted))

  it.effect("§3 5b a tool reviewer that hangs: after the first-token budget the request runs unreviewed, with a notice", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ ok: true })))
      yield* withLoopHarness({
        tools: [lookup.tool],
        loop: { firstTokenTimeout: Duration.seconds(30) },
        script: S.byModel({ [AUTHOR]: [S.callTool("lookup"), S.reply("Done.")], [REVIEWER]: [[S.hang], approve] })
      }, ({ tools }) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(loop())
          yield* TestClock.adjust("29 seconds")
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 0, "not dispatched while under review")
          yield* TestClock.adjust("1 second")
          const result = yield* Fiber.join(fiber)
          assert.strictEqual(result.status, "completed")
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1)
          assert.strictEqual((yield* tools.thoughtLog.notices)[0]?.kind, "draft_unreviewed")
        }))
    }).pipe(drafted))

  it.effect("a follow-up during a tool review does not end the chain: the request runs, the reply is reviewed and delivered", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ ok: true })))
      yield* withLoopHarness({
        tools: [lookup.tool],
        script: S.byModel({ [AUTHOR]: [S.callTool("lookup"), S.reply("Found it.")], [REVIEWER]: [[S.sleep("1 second"), ...approve], approve] })
      }, ({ collected, signals }) =>
        Effect.gen(function*() {
          const probe = yield* ScriptedProbe
          const fiber = yield* Effect.forkChild(loop())
          yield* probe.awaitCall(1)
          yield* signals.requestFollowUp
          yield* TestClock.adjust("1 second")
          const result = yield* Fiber.join(fiber)
          assert.deepStrictEqual([result.status, result.text], ["completed", "Found it."])
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1)
          assert.strictEqual(yield* collected.delivered, "Found it.")
        }))
    }).pipe(drafted))

  it.effect("§3 5b /kill during a tool review: stopped_by_user at once, the tool never runs, nothing posted", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("slow")
      yield* withLoopHarness({
        tools: [hanging.tool],
        script: S.byModel({ [AUTHOR]: [S.callTool("slow", {}, "Working on it.")], [REVIEWER]: [[S.hang]] })
      }, ({ collected, signals }) =>
        Effect.gen(function*() {
          const probe = yield* ScriptedProbe
          const fiber = yield* Effect.forkChild(loop())
          yield* probe.awaitCall(1)
          yield* signals.kill({ requesterId: "u1" })
          const result = yield* Fiber.join(fiber)
          assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", ""])
          assert.isFalse(yield* Ref.get(hanging.finalized), "the tool was never started")
          assert.strictEqual(yield* collected.delivered, "")
          assert.strictEqual(yield* probe.awaitFinalized(1), "interrupted")
        }))
    }).pipe(drafted))
})

describe("Response Drafting across attempts: review state and function history are shared by the turn (spec §2.10)", () => {
  const withTurn = <A, E, R>(
    options: Parameters<typeof withLoopHarness>[0] & { readonly models: ReadonlyArray<string> },
    body: (harness: LoopHarness) => Effect.Effect<A, E, R>
  ) => withLoopHarness(options, (harness) => body(harness).pipe(Effect.provide(Layer.merge(RoutePlan.make(options.models, []), KeyPool.Default))))

  it.effect("a fallback attempt inherits the pending narration and the tool outcome: the tool ran once, one reply delivered after approval", () =>
    Effect.gen(function*() {
      const lookup = yield* makeRecordingTool("lookup", () => Effect.succeed(toolSuccess({ answer: 42 })))
      yield* withTurn({
        models: ["primary", "fallback"],
        tools: [lookup.tool],
        script: S.byModel({
          primary: [S.callTool("lookup", { q: "x" }, "Checking."), [S.fail("Server", "down")]],
          fallback: [S.reply("It is 42.")],
          [REVIEWER]: [approve, approve]
        })
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.deepStrictEqual([result.status, result.text], ["completed", "Checking.\n\nIt is 42."])
          assert.deepStrictEqual(deliveredTexts(yield* collected.events), ["Checking.", "It is 42."])
          assert.strictEqual((yield* Ref.get(lookup.calls)).length, 1)
          const [fallback] = yield* requestsOf("fallback")
          assert.deepStrictEqual(fallback?.functionHistory.map((entry) => entry.functionResponse.response.result), [{ answer: 42 }])
          assert.isUndefined(fallback?.assistantPrefill, "nothing was shown, so nothing is continued")
        }))
    }).pipe(drafted))

  it.effect("the revision budget is the turn's: a revision asked of the primary leaves none for the fallback", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: S.byModel({
        primary: [S.reply("Draft one."), [S.fail("Server", "down")]],
        fallback: [S.reply("Draft two.")],
        [REVIEWER]: [verdict("revise", "Name the source."), verdict("revise", "Still no source.")]
      })
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Draft two."])
        assert.strictEqual(yield* collected.delivered, "Draft two.")
        const [fallback] = yield* requestsOf("fallback")
        assert.include(packetOf(fallback), "Name the source.", "the fallback was told the reviewer's feedback")
        assert.strictEqual((yield* requestsOf(REVIEWER)).length, 2)
      })).pipe(drafted))
})

describe("Response Drafting with scene metadata (spec §2.9, §2.10)", () => {
  const scene = (text: string) => S.ScriptStep.Emit({ event: ProviderEvent.SceneDetails({ text }) })

  it.effect("§2.9 review mode: a cancelled reply carries no scene metadata; an approved one does", () =>
    Effect.gen(function*() {
      const cancelled = yield* withLoopHarness({
        script: S.byModel({ [AUTHOR]: [[scene("mood: calm"), S.text("Draft."), S.finish("stop")]], [REVIEWER]: [verdict("cancel")] })
      }, () => loop()).pipe(drafted)
      assert.deepStrictEqual([cancelled.status, cancelled.text], ["stopped_by_user", ""])
      const approved = yield* withLoopHarness({
        script: S.byModel({ [AUTHOR]: [[scene("mood: calm"), S.text("Draft."), S.finish("stop")]], [REVIEWER]: [approve] })
      }, () => loop()).pipe(drafted)
      assert.deepStrictEqual([approved.status, approved.text], ["completed", "Draft.\n\n[Scene Metadata]\nmood: calm"])
    }))

  it.effect("§2.10 a revision clears the rejected draft's scene metadata", () =>
    withLoopHarness({
      script: S.byModel({
        [AUTHOR]: [[scene("mood: wrong"), S.text("Draft one."), S.finish("stop")], S.reply("Draft two.")],
        [REVIEWER]: [verdict("revise", "Again."), approve]
      })
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Draft two."])
      })).pipe(drafted))
})
