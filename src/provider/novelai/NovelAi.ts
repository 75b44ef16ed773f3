import * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer, Option, Predicate, Redacted, Stream } from "effect"
import { personaSetting } from "../../config/PersonaConfig"
import type { ProviderError } from "../../domain/ProviderError"
import { type FinishReason, ProviderEvent } from "../../domain/ProviderEvent"
import { makeUsage } from "../../domain/TokenUsage"
import type { GenerationRequest } from "../GenerationRequest"
import { LanguageModel } from "../LanguageModel"
import { httpProviderSettings, novelAiSettings } from "../providerConfig"
import { errorMessageOf, fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import { joinUrl, jsonPost, sendStreaming, vendorClient } from "../providerHttp"
import { carryKey, conversationKey, type FragmentCarry, makeFragmentCarry } from "./fragmentCarry"
import { novelAiPrompt, speakersOf } from "./novelAiPrompt"
import { SceneDetailsFilter } from "./sceneDetails"
import { SentenceHold } from "./sentenceHold"
import { SpeakerGuard } from "./speakerGuard"
import { makeTokenDecoder, type TokenEvent } from "./tokenStream"

/**
 * NovelAI's text API: `POST {baseUrl}/ai/generate-stream` (`https://text.novelai.net`), the
 * native endpoint, answered with one `newToken` SSE event per token (`tokenStream.ts`). We use
 * it rather than the OpenAI-compatible `/oa/v1/completions` because its models (Erato, Kayra)
 * are story models continuing a flat text prompt (`novelAiPrompt.ts`).
 *
 * NovelAI caps one request at a few hundred tokens (`max_length`, 150 on most tiers), so one
 * pass is a provider-owned session of bounded fragments: each fragment continues the prompt
 * plus everything generated so far; the session ends when the model stops on its own (fewer
 * tokens than asked for), starts another speaker's line (`speakerGuard.ts`), or the pass's one
 * total output budget is spent. At the budget the unfinished last sentence is held back
 * (`sentenceHold.ts`) and reported as `ContinuationFragment`, so the reply ends at a sentence;
 * a reply that is one unfinished sentence is shown as it is rather than not at all. When a
 * fragment request fails mid-reply, the held text and the tokens spent are left for the retry
 * (`fragmentCarry.ts`), which shows it first and continues it. `<details>` blocks are drained
 * as scene metadata (`sceneDetails.ts`). NovelAI models are not offered tools: the request's
 * tools are not sent and no call is ever emitted. Usage: output tokens are counted (one event a
 * token); NovelAI reports no input count, so input is estimated at 4 characters a token.
 */

const providerName = "novelai"
const defaultBaseUrl = "https://text.novelai.net"
/** Output tokens one NovelAI request may ask for on most subscription tiers. */
const defaultFragmentTokens = 150
/** The pass's total output budget when the request sets none. */
const defaultMaxOutputTokens = 600
/** About 8k tokens of context at 3 characters a token, less the output. */
const defaultMaxPromptChars = 22_000

export interface NovelAiOptions {
  readonly baseUrl?: string | undefined
  /** `max_length` of one fragment request. */
  readonly fragmentTokens?: number | undefined
  /** Total output tokens of one pass, across its fragments (a request's `maxOutputTokens` wins). */
  readonly maxOutputTokens?: number | undefined
  /** The bot's speaker label in the prompt (`BOT_PERSONA_NAME`). */
  readonly botName?: string | undefined
  readonly maxPromptChars?: number | undefined
  /** Merged into `parameters` (sampling presets: `top_p`, `repetition_penalty`, `order`...). */
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4)

/** The mutable state of one pass (one fiber drives it, like a decoder). */
class Session {
  private readonly details = new SceneDetailsFilter()
  private readonly guard: SpeakerGuard
  private readonly hold = new SentenceHold()
  /** Everything the model wrote in this reply (the continuation input), shown or not. */
  generated = ""
  tokensUsed: number
  private readonly carriedTokens: number
  private inputTokens = 0
  private fragmentTokens = 0
  private shownAny: boolean
  /** Still before the first visible character: leading whitespace is dropped. */
  private leading: boolean
  stopped = false

  constructor(
    readonly prompt: string,
    speakers: ReadonlyArray<string>,
    private readonly budget: number,
    private readonly fragmentMax: number,
    prefill: string,
    carried: Option.Option<{ readonly fragment: string; readonly tokensUsed: number }>
  ) {
    this.guard = new SpeakerGuard(speakers)
    this.shownAny = prefill.trim().length > 0
    // No double space after a prefill that already ends with one (or at the start of a reply).
    this.leading = !this.shownAny || /\s$/.test(prefill)
    this.carriedTokens = Option.match(carried, { onNone: () => 0, onSome: (entry) => entry.tokensUsed })
    this.tokensUsed = this.carriedTokens
  }

  /** Output tokens the next fragment may ask for (0: the budget is spent). */
  nextFragment(): { readonly maxLength: number; readonly input: string } {
    const maxLength = Math.max(0, Math.min(this.fragmentMax, this.budget - this.tokensUsed))
    const input = this.prompt + this.generated
    if (maxLength > 0) {
      this.fragmentTokens = 0
      this.inputTokens += estimateTokens(input)
    }
    return { maxLength, input }
  }

  /** The carried fragment of a failed attempt goes first, as if just generated. */
  resume(fragment: string): ReadonlyArray<ProviderEvent> {
    return this.absorb(fragment)
  }

  onToken(event: TokenEvent): ReadonlyArray<ProviderEvent> {
    if (event._tag === "KeepAlive") return [ProviderEvent.KeepAlive()]
    if (event._tag === "Final") return []
    this.fragmentTokens += 1
    this.tokensUsed += 1
    return this.absorb(event.text)
  }

  private absorb(text: string): ReadonlyArray<ProviderEvent> {
    if (this.stopped) return []
    this.generated += text
    const out: Array<ProviderEvent> = []
    const step = this.details.feed(text)
    for (const body of step.details) out.push(ProviderEvent.SceneDetails({ text: body }))
    const guarded = this.guard.feed(step.visible)
    if (guarded.stop) this.stopped = true
    this.show(this.hold.feed(guarded.released), out)
    return out
  }

  private show(text: string, out: Array<ProviderEvent>) {
    const visible = this.leading ? text.trimStart() : text
    if (visible.length === 0) return
    this.leading = false
    this.shownAny = true
    out.push(ProviderEvent.TextDelta({ text: visible }))
  }

  /**
   * After a fragment's token stream ended: `continue` with another fragment, or how the reply
   * ended: `stop` (a turn boundary, or fewer tokens than asked for: the model ended its turn)
   * or `length` (the whole budget is spent).
   */
  afterFragment(maxLength: number): "continue" | "stop" | "length" {
    if (this.stopped || this.fragmentTokens < maxLength) return "stop"
    return this.budget - this.tokensUsed > 0 ? "continue" : "length"
  }

  /** The session's last events: what is still held, usage, the finish. */
  finish(reason: FinishReason): { readonly events: ReadonlyArray<ProviderEvent>; readonly heldBack: string | undefined } {
    const out: Array<ProviderEvent> = []
    if (!this.stopped) {
      const tail = this.details.end()
      for (const body of tail.details) out.push(ProviderEvent.SceneDetails({ text: body }))
      this.show(this.hold.feed(this.guard.end() + tail.visible), out)
    }
    let heldBack: string | undefined
    if (reason === "length" && this.shownAny && !this.hold.pendingEndsSentence) {
      heldBack = this.hold.flush()
      out.push(ProviderEvent.ContinuationFragment({ text: heldBack }))
    } else {
      this.show(this.hold.flush(), out)
    }
    out.push(this.usage())
    out.push(ProviderEvent.Finish({ reason }))
    return { events: out, heldBack }
  }

  /** This pass's usage (a carried fragment's tokens were the failed pass's). */
  usage(): ProviderEvent {
    return ProviderEvent.Usage({ usage: makeUsage({ inputTokens: this.inputTokens, outputTokens: this.tokensUsed - this.carriedTokens }) })
  }

  /** What a retry needs when this pass fails now: the text not yet shown and the tokens spent. */
  carry(): { readonly fragment: string; readonly tokensUsed: number } | undefined {
    const fragment = this.guard.end() + this.hold.flush()
    return fragment.length === 0 && this.tokensUsed === 0 ? undefined : { fragment, tokensUsed: this.tokensUsed }
  }
}

const make = Effect.fnUntraced(function*(options: NovelAiOptions = {}) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const carry: FragmentCarry = yield* makeFragmentCarry()
  const url = joinUrl(options.baseUrl ?? defaultBaseUrl, "ai/generate-stream")
  const fragmentMax = Math.max(1, options.fragmentTokens ?? defaultFragmentTokens)
  const promptOptions = { botName: options.botName ?? "Assistant", maxChars: options.maxPromptChars ?? defaultMaxPromptChars }

  /** One fragment request: its token events. */
  const fragment = (request: GenerationRequest, input: string, maxLength: number) =>
    Effect.gen(function*() {
      const httpRequest = yield* jsonPost({
        provider: providerName,
        url,
        headers: {
          ...options.headers,
          ...(request.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(request.apiKey)}` })
        },
        body: {
          input,
          model: request.model,
          parameters: {
            use_string: true,
            min_length: 1,
            ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
            ...options.parameters,
            max_length: maxLength
          }
        }
      })
      const body = yield* sendStreaming(client, httpRequest, providerName)
      if (body._tag === "Sse") return body.decode(() => makeTokenDecoder(providerName))
      // `/ai/generate`'s whole answer (`{output}`) from a gateway that ignored streaming, or an error.
      const value = body.value
      if (Predicate.isObject(value) && typeof value.output === "string") {
        const whole: ReadonlyArray<TokenEvent> = [{ _tag: "Token", text: value.output }, { _tag: "Final" }]
        return Stream.fromIterable(whole)
      }
      return yield* errorMessageOf(value) !== undefined
        ? fromStreamErrorPayload(providerName, value)
        : invalidResponse(providerName, "expected an event stream but got a JSON document")
    })

  const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
    Stream.unwrap(Effect.gen(function*() {
      const conversation = conversationKey(request)
      const prefill = request.assistantPrefill ?? ""
      const carried = yield* carry.take(carryKey(conversation, prefill))
      const session = new Session(
        novelAiPrompt(request, promptOptions),
        speakersOf(request, promptOptions.botName),
        Math.max(1, request.maxOutputTokens ?? options.maxOutputTokens ?? defaultMaxOutputTokens),
        fragmentMax,
        prefill,
        carried
      )
      // Text shown during this pass, to key what a failure leaves for the retry.
      let shown = ""
      const track = (events: ReadonlyArray<ProviderEvent>) => {
        for (const event of events) if (event._tag === "TextDelta") shown += event.text
        return events
      }

      const ending = (reason: FinishReason) =>
        Stream.suspend(() => {
          const { events, heldBack } = session.finish(reason)
          const log = heldBack === undefined
            ? Effect.void
            : Effect.logInfo("novelai: output budget spent mid-sentence; the unfinished sentence is held back").pipe(
              Effect.annotateLogs({ heldChars: heldBack.length, tokens: session.tokensUsed })
            )
          return Stream.concat(Stream.fromEffectDrain(log), Stream.fromIterable(track(events)))
        })

      const fragments = (): Stream.Stream<ProviderEvent, ProviderError> =>
        Stream.suspend(() => {
          const next = session.nextFragment()
          if (next.maxLength === 0) return ending("length")
          return Stream.unwrap(Effect.map(fragment(request, next.input, next.maxLength), (tokens) =>
            tokens.pipe(
              Stream.map((event) => track(session.onToken(event))),
              // A turn boundary ends the fragment at once: the request is closed, nothing more is read.
              Stream.takeUntil(() => session.stopped),
              Stream.flattenIterable,
              Stream.concat(Stream.suspend(() => {
                const after = session.afterFragment(next.maxLength)
                return after === "continue" ? fragments() : ending(after)
              }))
            )))
        })

      const start = Option.match(carried, { onNone: () => [], onSome: (entry) => track(session.resume(entry.fragment)) })
      return Stream.concat(Stream.fromIterable(start), fragments()).pipe(
        // A failure mid-reply: this pass's usage, then what the retry needs, then the error.
        Stream.catch((error) =>
          Stream.concat(
            Stream.make(session.usage()),
            Stream.concat(
              Stream.fromEffectDrain(Effect.suspend(() => {
                const left = session.carry()
                return left === undefined ? Effect.void : carry.put(carryKey(conversation, prefill + shown), left)
              })),
              Stream.fail(error)
            )
          )
        )
      )
    }))

  return LanguageModel.of({ name: providerName, stream })
})

export const layer = (options: NovelAiOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/**
 * Reads `LLM_BASE_URL`, `NOVELAI_MAX_OUTPUT_TOKENS`, `NOVELAI_FRAGMENT_TOKENS` and the bot's
 * name (`BOT_PERSONA_NAME`). `LLM_TOOL_CALLING=verbatim` does not apply: NovelAI is offered no tools.
 */
export const layerConfig = (options: Omit<NovelAiOptions, "baseUrl" | "fragmentTokens" | "maxOutputTokens" | "botName"> = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const settings = yield* httpProviderSettings
    const novelai = yield* novelAiSettings
    const persona = yield* personaSetting
    if (settings.toolCalling === "verbatim") {
      yield* Effect.logWarning("LLM_TOOL_CALLING=verbatim is ignored for LLM_PROVIDER=novelai: NovelAI models are offered no tools")
    }
    return layer({
      ...options,
      baseUrl: settings.baseUrl,
      fragmentTokens: novelai.fragmentTokens,
      maxOutputTokens: novelai.maxOutputTokens,
      botName: persona.name
    })
  }))
