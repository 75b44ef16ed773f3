import { Config, Context, Result, Layer, Option } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"

/** Response Drafting (docs/architecture.md, Response Drafting): off unless `RESPONSE_DRAFTING=on`. */
export interface DraftingSettings {
  /** Prose is held and reviewed before anyone sees it; tool requests are reviewed before dispatch. */
  readonly enabled: boolean
  /** `RESPONSE_REVIEW_MODEL`; undefined: the reviewer is the attempt's own model. */
  readonly reviewModel: string | undefined
}

const draftingOff: DraftingSettings = { enabled: false, reviewModel: undefined }

const ON = ["on", "true", "1", "yes"]
const OFF = ["off", "false", "0", "no", ""]

const enabled: Config.Config<boolean> = Config.String("RESPONSE_DRAFTING").pipe(
  Config.withDefault("off"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    if (ON.includes(value)) return Result.succeed(true)
    if (OFF.includes(value)) return Result.succeed(false)
    return Result.fail(invalidSetting("RESPONSE_DRAFTING", `must be on or off (got "${raw}")`))
  })
)

const reviewModel: Config.Config<string | undefined> = Config.option(Config.String("RESPONSE_REVIEW_MODEL")).pipe(
  Config.map((value) => Option.getOrUndefined(Option.filter(Option.map(value, (raw) => raw.trim()), (raw) => raw.length > 0)))
)

/** `RESPONSE_DRAFTING` and `RESPONSE_REVIEW_MODEL`, read here and nowhere else. */
export const draftingSettings: Config.Config<DraftingSettings> = Config.all({ enabled, reviewModel })

/**
 * A Reference: the loop finds "off" without any wiring (tests, embedding); `main` provides the
 * environment's values through `DraftingConfig.layer`.
 */
export class DraftingConfig extends Context.Reference<DraftingSettings>("loopcord/config/DraftingConfig", {
  defaultValue: () => draftingOff
}) {
  static readonly layer = Layer.effect(DraftingConfig, draftingSettings)
  /** Drafting on (by default) with overrides, for tests. */
  static readonly make = (overrides: Partial<DraftingSettings> = {}) =>
    Layer.succeed(DraftingConfig, { enabled: true, reviewModel: undefined, ...overrides })
}
