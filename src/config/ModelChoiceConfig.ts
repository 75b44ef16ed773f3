import { Config, Context, Result, Layer, Option } from "effect"
import { providerSettings } from "./ProviderConfig"
import { invalidSetting, mapOrFail } from "./settingError"

/** A server's model chain: at most this many models (the primary, then fallbacks). */
const MAX_MODEL_CHAIN = 5
/** The longest model name a server may store (provider ids are far shorter). */
const MODEL_NAME_MAX = 200

/**
 * Which models a server may pick with `/model` (`LLM_MODELS_ALLOWED`): the operator's
 * list, and always the models of `LLM_MODELS`; `*` lets a server name any model.
 */
export interface ModelChoices {
  /** `LLM_MODELS`: what a server that chose nothing runs on. */
  readonly defaults: ReadonlyArray<string>
  /** The models offered (the allowed list, then the defaults not in it), in the operator's order. */
  readonly allowed: ReadonlyArray<string>
  /** `LLM_MODELS_ALLOWED=*`: every model name is accepted (still bounded in length and count). */
  readonly anyModel: boolean
}

const trimmedList = (raw: string) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

/** A model name as a server may store it: printable, no whitespace or commas, bounded. */
const plausibleName = (name: string) => name.length <= MODEL_NAME_MAX && /^[^\s,]+$/.test(name)

const isAllowedModel = (choices: ModelChoices, name: string): boolean =>
  plausibleName(name) && (choices.anyModel || choices.allowed.includes(name))

/**
 * A server's chain from what an admin typed (`a, b`): trimmed, duplicates dropped, at most
 * MAX_MODEL_CHAIN, every model allowed. Left: one line saying what is wrong.
 */
export const parseModelChain = (choices: ModelChoices, raw: string): Result.Result<ReadonlyArray<string>, string> => {
  const names = [...new Set(trimmedList(raw))]
  if (names.length === 0) return Result.fail("Name at least one model.")
  if (names.length > MAX_MODEL_CHAIN) return Result.fail(`At most ${MAX_MODEL_CHAIN} models: the primary, then fallbacks.`)
  const refused = names.filter((name) => !isAllowedModel(choices, name))
  if (refused.length > 0) {
    const shown = refused.map((name) => `\`${name.slice(0, 60)}\``).join(", ")
    return Result.fail(`Not an allowed model: ${shown}. Allowed: ${describeAllowed(choices)}.`)
  }
  return Result.succeed(names)
}

/** The allowed models as one line (the first few when there are many). */
export const describeAllowed = (choices: ModelChoices): string => {
  if (choices.anyModel) return "any model"
  const shown = choices.allowed.slice(0, 10).map((name) => `\`${name}\``).join(", ")
  return choices.allowed.length > 10 ? `${shown} and ${choices.allowed.length - 10} more` : shown
}

/** A stored chain as it can run now: models the operator no longer allows are dropped; none left: the defaults. */
export const effectiveChain = (choices: ModelChoices, stored: ReadonlyArray<string> | undefined): ReadonlyArray<string> | undefined => {
  if (stored === undefined) return undefined
  const usable = stored.filter((name) => isAllowedModel(choices, name)).slice(0, MAX_MODEL_CHAIN)
  return usable.length === 0 ? undefined : usable
}

export const makeModelChoices = (defaults: ReadonlyArray<string>, allowed: ReadonlyArray<string> | "*" = []): ModelChoices => ({
  defaults,
  allowed: allowed === "*" ? [...defaults] : [...new Set([...allowed, ...defaults])],
  anyModel: allowed === "*"
})

/** `LLM_MODELS_ALLOWED` with `LLM_MODELS`. */
export const modelChoicesSetting: Config.Config<ModelChoices> = Config.all({
  // Read first: a provider setting that fails must not hide this variable from the catalogue.
  raw: Config.option(Config.String("LLM_MODELS_ALLOWED")),
  provider: providerSettings
}).pipe(
  mapOrFail(({ provider, raw }) => {
    const listed = Option.match(raw, { onNone: () => [], onSome: trimmedList })
    if (listed.length === 1 && listed[0] === "*") return Result.succeed(makeModelChoices(provider.models, "*"))
    const bad = listed.find((name) => !plausibleName(name))
    return bad === undefined
      ? Result.succeed(makeModelChoices(provider.models, listed))
      : Result.fail(invalidSetting("LLM_MODELS_ALLOWED", `must be a comma-separated list of model names, or * (got "${bad.slice(0, 60)}")`))
  })
)

export class ModelChoiceConfig extends Context.Service<ModelChoiceConfig, ModelChoices>()("loopcord/config/ModelChoiceConfig") {
  static readonly layer = Layer.effect(ModelChoiceConfig, modelChoicesSetting)
  /** Plain values (tests, embedding). */
  static readonly make = (defaults: ReadonlyArray<string>, allowed: ReadonlyArray<string> | "*" = []) =>
    Layer.succeed(ModelChoiceConfig, makeModelChoices(defaults, allowed))
}
