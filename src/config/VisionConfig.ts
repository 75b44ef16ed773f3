import { Config, Context, Duration, Layer, Option } from "effect"
import { intSetting, listSetting, millisSetting } from "./settings"

const MIB = 1024 * 1024

/** analyze_image and images in the conversation. */
export interface VisionSettings {
  /** `VISION_MODEL`; None: the primary chat model answers analyze_image. */
  readonly model: Option.Option<string>
  /** One analyze_image call, downloads and inference together. */
  readonly analysisTimeout: Duration.Duration
  /** Largest image downloaded (`VISION_MAX_IMAGE_MB`). */
  readonly maxImageBytes: number
  /** `LLM_VISION_MODELS`: models that are sent images; `*` means every model. */
  readonly visionModels: ReadonlyArray<string>
  /** Images sent inline per request at most (the newest); older ones become placeholders. */
  readonly maxImagesPerRequest: number
}

const defaultVisionSettings: VisionSettings = {
  model: Option.none(),
  analysisTimeout: Duration.millis(60_000),
  maxImageBytes: 20 * MIB,
  visionModels: [],
  maxImagesPerRequest: 8
}

const fromEnv: Config.Config<VisionSettings> = Config.all({
  model: Config.String("VISION_MODEL").pipe(
    Config.withDefault(""),
    Config.map((model) => (model.trim() === "" ? Option.none() : Option.some(model.trim())))
  ),
  analysisTimeout: millisSetting("VISION_ANALYSIS_TIMEOUT_MS", { default: 60_000, min: 1_000 }),
  maxImageMb: intSetting("VISION_MAX_IMAGE_MB", { default: 20, min: 1 }),
  visionModels: listSetting("LLM_VISION_MODELS")
}).pipe(
  Config.map(({ maxImageMb, ...rest }) => ({ ...defaultVisionSettings, ...rest, maxImageBytes: maxImageMb * MIB }))
)

/** Whether `model` is sent images (`LLM_VISION_MODELS`, `*` = all). */
export const seesImages = (settings: Pick<VisionSettings, "visionModels">, model: string): boolean =>
  settings.visionModels.includes("*") || settings.visionModels.includes(model)

export class VisionConfig extends Context.Service<VisionConfig, VisionSettings>()("loopcord/config/VisionConfig") {
  static readonly layer = Layer.effect(VisionConfig, fromEnv)
  static readonly make = (overrides: Partial<VisionSettings> = {}) =>
    Layer.succeed(VisionConfig, { ...defaultVisionSettings, ...overrides })
}
