import { Clock, Data, Duration, Effect, Option, Ref, Result, Stream } from "effect"
import { LoopConfig } from "../../config/LoopConfig"
import { isContent, type ProviderEvent } from "../../domain/ProviderEvent"
import type { TokenUsage } from "../../domain/TokenUsage"
import type { GenerationRequest } from "../../provider/GenerationRequest"
import type { LanguageModel } from "../../provider/LanguageModel"
import { TurnSignals } from "../TurnSignals"
import { decodeVerdict, type ReviewVerdict } from "./ReviewVerdict"

/** A verdict is a short JSON object; an answer longer than this is garbage, and is not read further. */
const REVIEW_ANSWER_MAX_CHARS = 8_000

/** Why a review produced no verdict; the draft (or tool request) then goes ahead unreviewed. */
type Unreviewed = "first_token_timeout" | "inactivity_timeout" | "garbage" | "provider_error"

/** How asking the reviewer ended. */
type ReviewAnswer = Data.TaggedEnum<{
  Answered: { readonly verdict: ReviewVerdict; readonly usage: TokenUsage | undefined }
  Unanswered: { readonly why: Unreviewed; readonly detail: string; readonly usage: TokenUsage | undefined }
  /** /kill (or a registered stop) arrived before or during the review. */
  Killed: {}
}>

const ReviewAnswer = Data.taggedEnum<ReviewAnswer>()

interface Heard {
  readonly text: string
  readonly usage: TokenUsage | undefined
  /** Why reading stopped early (a tool call, an overlong answer). */
  readonly garbage: string | undefined
}

type Phase = "first_token" | "idle"

/**
 * Asks the reviewer once (through the turn's LanguageModel), bounded like a stream pass
 * (docs/architecture.md, "Stream deadlines"): the first-token budget until its first content,
 * then the inactivity budget, both on the Clock; /kill ends it at once.
 * Never fails: a hang, an error, an overlong or undecodable answer is `Unanswered`.
 */
export const askReviewer = (
  model: LanguageModel["Service"],
  request: GenerationRequest
): Effect.Effect<ReviewAnswer, never, LoopConfig | TurnSignals> =>
  Effect.gen(function*() {
    const config = yield* LoopConfig
    const signals = yield* TurnSignals

    const pending = yield* signals.current
    if (Option.isSome(pending) && pending.value._tag === "Stop") return ReviewAnswer.Killed()

    const heard = yield* Ref.make<Heard>({ text: "", usage: undefined, garbage: undefined })
    const startedAt = yield* Clock.currentTimeMillis
    const deadline = yield* Ref.make({ at: startedAt + Duration.toMillis(config.firstTokenTimeout), phase: "first_token" as Phase })
    const inactivityMs = Duration.toMillis(config.streamInactivityTimeout)
    const rearm = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(deadline, { at: now + inactivityMs, phase: "idle" as Phase }))

    /** Reads one event; false stops reading (the answer is already garbage). */
    const onEvent = (event: ProviderEvent): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        if (isContent(event)) yield* rearm
        switch (event._tag) {
          case "TextDelta":
            return yield* Ref.modify(heard, (h) => {
              const text = h.text + event.text
              return text.length > REVIEW_ANSWER_MAX_CHARS
                ? [false, { ...h, garbage: `an answer longer than ${REVIEW_ANSWER_MAX_CHARS} characters` }]
                : [true, { ...h, text }]
            })
          case "ToolCall":
            yield* Ref.update(heard, (h) => ({ ...h, garbage: `a tool call (${event.call.name}) instead of a verdict` }))
            return false
          case "Usage":
            yield* Ref.update(heard, (h) => ({ ...h, usage: event.usage }))
            return true
          default:
            return true
        }
      })

    const consume: Effect.Effect<ReviewAnswer> = model.stream(request).pipe(
      Stream.runForEachWhile(onEvent),
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.map(Ref.get(heard), (h) => ReviewAnswer.Unanswered({ why: "provider_error", detail: `${error.reason}: ${error.detail}`, usage: h.usage })),
        onSuccess: () =>
          Effect.map(Ref.get(heard), (h) => {
            if (h.garbage !== undefined) return ReviewAnswer.Unanswered({ why: "garbage", detail: h.garbage, usage: h.usage })
            return Result.match(decodeVerdict(h.text), {
              onFailure: (why) => ReviewAnswer.Unanswered({ why: "garbage", detail: why, usage: h.usage }),
              onSuccess: (verdict) => ReviewAnswer.Answered({ verdict, usage: h.usage })
            })
          })
      })
    )

    // Sleeps until the moving deadline passes (no nap longer than one inactivity budget).
    const watchdog: Effect.Effect<ReviewAnswer> = Effect.gen(function*() {
      while (true) {
        const { at, phase } = yield* Ref.get(deadline)
        const now = yield* Clock.currentTimeMillis
        if (now >= at) {
          const h = yield* Ref.get(heard)
          return phase === "first_token"
            ? ReviewAnswer.Unanswered({ why: "first_token_timeout", detail: `no answer within ${Duration.format(config.firstTokenTimeout)}`, usage: h.usage })
            : ReviewAnswer.Unanswered({ why: "inactivity_timeout", detail: `silent for ${Duration.format(config.streamInactivityTimeout)}`, usage: h.usage })
        }
        yield* Effect.sleep(Duration.millis(Math.min(at - now, inactivityMs)))
      }
    })

    // The first to finish decides; the others are interrupted (the reviewer's request is closed).
    return yield* Effect.raceAll([consume, watchdog, Effect.as(signals.awaitKill, ReviewAnswer.Killed())])
  })
