import { readFileSync } from "node:fs"
import { Config, Context, Duration, Result, Layer, Option, Predicate, Redacted } from "effect"
import { millisSetting } from "./settings"
import { parseJsonOrUndefined } from "../domain/parseJson"
import { invalidSetting, mapOrFail } from "./settingError"

/** The image backends `generate_image` can use (`IMAGE_BACKEND`). */
const IMAGE_BACKENDS = ["openai", "comfyui"] as const
type ImageBackendKind = (typeof IMAGE_BACKENDS)[number]

/** An API-format ComfyUI workflow: node id → `{ class_type, inputs }`. Kept as parsed JSON. */
export type ComfyWorkflowJson = Readonly<Record<string, unknown>>

/** `generate_image` settings. `backend` None: the tool does not exist. */
export interface ImageSettings {
  readonly backend: Option.Option<ImageBackendKind>
  /** `IMAGE_BASE_URL` without a trailing slash (OpenAI: its public API by default). */
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** `IMAGE_MODEL` (OpenAI Images; ComfyUI ignores it: the workflow names its checkpoint). */
  readonly model: string
  /** `COMFYUI_WORKFLOW`: the workflow, inline JSON or a path to a JSON file. */
  readonly comfyWorkflow: Option.Option<ComfyWorkflowJson>
  readonly defaultPositiveTags: string
  readonly defaultNegativeTags: string
  /** One generation, uploads and download included (`IMAGE_TIMEOUT_MS`). */
  readonly timeout: Duration.Duration
  /** How often a ComfyUI job's history is polled while it runs. */
  readonly pollInterval: Duration.Duration
  /** Largest image a backend may send back. */
  readonly maxResultBytes: number
}

const OPENAI_API_BASE_URL = "https://api.openai.com/v1"

const defaultImageSettings: ImageSettings = {
  backend: Option.none(),
  baseUrl: OPENAI_API_BASE_URL,
  apiKey: Option.none(),
  model: "gpt-image-1",
  comfyWorkflow: Option.none(),
  defaultPositiveTags: "",
  defaultNegativeTags: "",
  timeout: Duration.millis(180_000),
  pollInterval: Duration.millis(1_000),
  maxResultBytes: 50 * 1024 * 1024
}

const invalid = (name: string, message: string) => invalidSetting(name, message)

/** An http(s) base URL or nothing; anything else names the variable. */
export const baseUrlSetting = (name: string): Config.Config<Option.Option<string>> =>
  Config.String(name).pipe(
    Config.withDefault(""),
    mapOrFail((raw) => {
      const url = raw.trim().replace(/\/+$/, "")
      if (url === "") return Result.succeed(Option.none())
      return /^https?:\/\/[^\s/]+/.test(url) && URL.canParse(url)
        ? Result.succeed(Option.some(url))
        : Result.fail(invalid(name, `must be an http(s) URL (got "${raw}")`))
    })
  )

/** A secret that may be unset or blank (blank ⇒ none). */
export const optionalSecret = (name: string): Config.Config<Option.Option<Redacted.Redacted<string>>> =>
  Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((key) => Redacted.value(key).trim() !== "")))

const backendSetting: Config.Config<Option.Option<ImageBackendKind>> = Config.String("IMAGE_BACKEND").pipe(
  Config.withDefault(""),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    if (value === "") return Result.succeed(Option.none())
    const kind = IMAGE_BACKENDS.find((candidate) => candidate === value)
    return kind === undefined
      ? Result.fail(invalid("IMAGE_BACKEND", `must be openai or comfyui, or unset (got "${raw}")`))
      : Result.succeed(Option.some(kind))
  })
)

/** Inline JSON (starts with `{`) or a path to a file holding it; must be a JSON object. */
export const parseWorkflowSetting = (raw: string, readFile: (path: string) => string): Result.Result<Option.Option<ComfyWorkflowJson>, string> => {
  const value = raw.trim()
  if (value === "") return Result.succeed(Option.none())
  let text = value
  if (!value.startsWith("{")) {
    try {
      text = readFile(value)
    } catch (error) {
      return Result.fail(`cannot read the workflow file "${value}": ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const parsed = parseJsonOrUndefined(text)
  if (parsed === undefined) return Result.fail("is not valid JSON (export the workflow with \"Save (API Format)\")")
  return Predicate.isObject(parsed)
    ? Result.succeed(Option.some(parsed as ComfyWorkflowJson))
    : Result.fail("must be a JSON object (an API-format workflow: node id → { class_type, inputs })")
}

const workflowSetting: Config.Config<Option.Option<ComfyWorkflowJson>> = Config.String("COMFYUI_WORKFLOW").pipe(
  Config.withDefault(""),
  mapOrFail((raw) =>
    Result.mapError(parseWorkflowSetting(raw, (path) => readFileSync(path, "utf8")), (message) => invalid("COMFYUI_WORKFLOW", message))
  )
)

const fromEnv: Config.Config<ImageSettings> = Config.all({
  backend: backendSetting,
  baseUrl: baseUrlSetting("IMAGE_BASE_URL"),
  apiKey: optionalSecret("IMAGE_API_KEY"),
  model: Config.String("IMAGE_MODEL").pipe(Config.withDefault(""), Config.map((model) => model.trim())),
  comfyWorkflow: workflowSetting,
  defaultPositiveTags: Config.String("IMAGE_DEFAULT_POSITIVE_TAGS").pipe(Config.withDefault(""), Config.map((tags) => tags.trim())),
  defaultNegativeTags: Config.String("IMAGE_DEFAULT_NEGATIVE_TAGS").pipe(Config.withDefault(""), Config.map((tags) => tags.trim())),
  timeout: millisSetting("IMAGE_TIMEOUT_MS", { default: 180_000, min: 1_000 })
}).pipe(
  mapOrFail(({ baseUrl, model, ...rest }) => {
    const backend = Option.getOrUndefined(rest.backend)
    if (backend === "comfyui" && Option.isNone(baseUrl)) {
      return Result.fail(invalidSetting("IMAGE_BASE_URL", "required for IMAGE_BACKEND=comfyui: the ComfyUI server, e.g. http://127.0.0.1:8188"))
    }
    if (backend === "comfyui" && Option.isNone(rest.comfyWorkflow)) {
      return Result.fail(invalidSetting("COMFYUI_WORKFLOW", "required for IMAGE_BACKEND=comfyui: an API-format workflow (JSON or a file path)"))
    }
    return Result.succeed({
      ...defaultImageSettings,
      ...rest,
      baseUrl: Option.getOrElse(baseUrl, () => OPENAI_API_BASE_URL),
      model: model === "" ? defaultImageSettings.model : model
    })
  })
)

export class ImageConfig extends Context.Service<ImageConfig, ImageSettings>()("loopcord/config/ImageConfig") {
  static readonly layer = Layer.effect(ImageConfig, fromEnv)
  static readonly make = (overrides: Partial<ImageSettings> = {}) =>
    Layer.succeed(ImageConfig, { ...defaultImageSettings, ...overrides })
}
