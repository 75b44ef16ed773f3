import { Duration, Effect, Option, Stream } from "effect"
import type { GenerationRequest } from "../../provider/GenerationRequest"
import type { LanguageModel } from "../../provider/LanguageModel"
import { callArguments, toolResultText } from "../../provider/toolReplay"
import type { TurnSignalsShape } from "../TurnSignals"
import type { Exchange } from "./exchanges"
import { textTokens } from "./tokenEstimate"

/**
 * Summary compaction (`CONTEXT_COMPACTION=summarize`): the turn's oldest tool exchanges are
 * summarised by the same model in one bounded request (no tools, a capped output, a deadline,
 * stopped by /kill), and the summary replaces them in every later pass. The request is itself
 * fitted to the window: each result gets an equal share of it. Any failure is no summary (the
 * budget then leaves those exchanges out, as `elide` does).
 */

const SUMMARY_DEADLINE = Duration.seconds(90)
/** Longest summary kept, in characters (the model is asked for far less). */
const MAX_SUMMARY_CHARS = 6_000

const SUMMARY_SYSTEM =
  "You condense tool results for your own later use. Write a compact summary of the tool calls below: " +
  "for each call, what was asked and the facts, figures, names and URLs its result gave that could matter " +
  "for answering the user. Leave out boilerplate. Write plain text only, no preamble."

export const summarizeExchanges = (input: {
  readonly model: LanguageModel["Service"]
  readonly request: GenerationRequest
  readonly exchanges: ReadonlyArray<Exchange>
  readonly earlier: { readonly covers: number; readonly text: string } | undefined
  readonly window: number
  /** Raw estimated tokens a request to this model may take. */
  readonly limit: number
  readonly signals: TurnSignalsShape
}): Effect.Effect<string | undefined> => {
  const entries = input.exchanges.flatMap((exchange) => exchange.entries)
  const maxOutput = Math.max(256, Math.min(1_024, Math.floor(input.window / 8)))
  const fixed = textTokens(SUMMARY_SYSTEM) + (input.earlier === undefined ? 0 : textTokens(input.earlier.text)) + 64 * entries.length
  const perResult = Math.max(0, Math.floor((input.limit - maxOutput - fixed) / Math.max(1, entries.length)))
  const parts = entries.map((entry, index) => {
    const text = toolResultText(entry)
    const cost = Math.max(1, textTokens(text))
    const keep = cost <= perResult ? text.length : Math.floor(perResult * (text.length / cost))
    const shown = keep >= text.length ? text : `${text.slice(0, keep)} […]`
    return `Call ${index + 1}: ${entry.functionCall.name} ${JSON.stringify(callArguments(entry))}\nResult:\n${shown}`
  })
  const transcript = [
    ...(input.earlier === undefined ? [] : [`Summary of the calls before these:\n${input.earlier.text}`]),
    ...parts
  ].join("\n\n")
  const request: GenerationRequest = {
    model: input.request.model,
    apiKey: input.request.apiKey,
    system: SUMMARY_SYSTEM,
    messages: [{ role: "user", content: transcript }],
    tools: [],
    functionHistory: [],
    maxOutputTokens: maxOutput
  }
  const written = input.model.stream(request).pipe(
    Stream.runFold(() => "", (text: string, event) => (event._tag === "TextDelta" && text.length < MAX_SUMMARY_CHARS ? text + event.text : text)),
    Effect.map((text) => text.trim().slice(0, MAX_SUMMARY_CHARS)),
    Effect.timeoutOption(SUMMARY_DEADLINE),
    Effect.map(Option.filter((text) => text.length > 0)),
    Effect.catch((error) => Effect.as(Effect.logWarning(`context budget: the summary request failed (${error.reason}); older tool calls are left out instead`), Option.none<string>()))
  )
  return Effect.raceFirst(written, Effect.as(input.signals.awaitKill, Option.none<string>())).pipe(Effect.map(Option.getOrUndefined))
}
