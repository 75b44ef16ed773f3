import { Effect, type Redacted, Ref } from "effect"
import type { GenerationRequest } from "../provider/GenerationRequest"
import { applyDeliberateAllowlist } from "../tools/deliberate/planDeliberateToolMode"
import { toDeclaration } from "../tools/Tool"
import { ToolRegistry } from "../tools/ToolRegistry"
import type { AttemptInfo } from "./AttemptInfo"
import { CurrentTurn } from "./CurrentTurn"
import type { LoopHooks } from "./LoopHooks"
import type { LoopState } from "./LoopState"

/** The note that replaces a refused reply prefill: what was posted, and to go on from there. */
export const continuationInstruction = (posted: string): string =>
  "[Your reply was interrupted after you had already posted the text between the markers below. " +
  "Continue right after its last word; do not repeat any of it and do not start over.]\n<<<\n" + posted + "\n>>>"

const isBlank = (text: string) => text.trim().length === 0

/**
 * The request of the next pass: the turn's context (and the hooks' notes), the tools this turn
 * declares, the history so far, and the carried text as the start of the answer (or, once a
 * server refused that shape, as an instruction). Also the text the pass continues.
 */
export const passRequest = (input: {
  readonly state: Ref.Ref<LoopState>
  readonly attempt: AttemptInfo
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly hooks: LoopHooks
}): Effect.Effect<{ readonly request: GenerationRequest; readonly continuing: string }, never, ToolRegistry | CurrentTurn> =>
  Effect.gen(function*() {
    const { attempt } = input
    const turn = yield* CurrentTurn
    const registry = yield* ToolRegistry
    const s = yield* Ref.get(input.state)
    // A stop response declares nothing; dispatch refuses a call anyway.
    const tools = turn.isStopResponse ? [] : yield* registry.toolsForTurn({
      provider: attempt.provider,
      model: attempt.model,
      guildId: turn.guildId,
      channelId: turn.channelId,
      flags: yield* Ref.get(turn.state.flags),
      turnState: turn.state
    })
    const messages = [...(yield* Ref.get(turn.state.contextItems)), ...(yield* input.hooks.requestNotes)]
    const continues = !isBlank(s.carried)
    const asInstruction = continues && s.continuation === "instruction"
    const request: GenerationRequest = {
      model: attempt.model,
      apiKey: input.apiKey,
      system: turn.persona.systemPrompt,
      messages: asInstruction ? [...messages, { role: "user", content: continuationInstruction(s.carried) }] : messages,
      // Deliberate mode declares only what the message asked for (dispatch re-checks it).
      tools: applyDeliberateAllowlist(tools, turn.deliberate).map(toDeclaration),
      functionHistory: s.functionHistory,
      ...(continues && !asInstruction ? { assistantPrefill: s.carried } : {})
    }
    return { request, continuing: s.carried }
  })
