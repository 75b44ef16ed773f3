import { Result } from "effect"
import { describeAllowed, type ModelChoices, parseModelChain } from "../config/ModelChoiceConfig"

/** What `/model …` in the terminal chat did: the chain from now on (undefined: the default) and the line shown. */
interface TerminalModelChange {
  readonly chain: ReadonlyArray<string> | undefined
  readonly line: string
}

const chainText = (chain: ReadonlyArray<string>) => chain.join(" → ")

/**
 * `/model` shows the chain and the allowed models, `/model reset` goes back to `LLM_MODELS`,
 * `/model a, b` picks a chain from the allowed models (pure; the chat keeps it for the session).
 */
export const terminalModelCommand = (choices: ModelChoices, current: ReadonlyArray<string> | undefined, argument: string): TerminalModelChange => {
  const arg = argument.trim()
  if (arg === "") {
    const shown = current === undefined ? `${chainText(choices.defaults)} (the default)` : chainText(current)
    return { chain: current, line: `model: ${shown}; allowed: ${describeAllowed(choices).replaceAll("`", "")}. /model NAME[, FALLBACK…] or /model reset` }
  }
  if (arg === "reset") return { chain: undefined, line: `model: ${chainText(choices.defaults)} (the default)` }
  return Result.match(parseModelChain(choices, arg), {
    onFailure: (problem) => ({ chain: current, line: `✗ ${problem.replaceAll("`", "")}` }),
    onSuccess: (chain) => ({ chain, line: `model: ${chainText(chain)}` })
  })
}
