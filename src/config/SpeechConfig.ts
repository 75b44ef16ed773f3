import { Config, Context, Duration, Layer, Option, type Redacted } from "effect"
import { baseUrlSetting, optionalSecret } from "./ImageConfig"
import { flagSetting, millisSetting } from "./settings"

/** `generate_voice_message` settings. `baseUrl` None: the tool does not exist. */
export interface SpeechSettings {
  /** An OpenAI-compatible server: `POST <SPEECH_BASE_URL>/audio/speech`. */
  readonly baseUrl: Option.Option<string>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly model: string
  readonly voice: string
  /** The endpoint follows `instructions` (gpt-4o-mini-tts style): `voice_instructions` is offered. */
  readonly supportsInstructions: boolean
  /** One synthesis, download included (`SPEECH_TIMEOUT_MS`). */
  readonly timeout: Duration.Duration
  /** Largest audio file accepted (Discord's attachment limit for bots is 10 MB). */
  readonly maxAudioBytes: number
}

const defaultSpeechSettings: SpeechSettings = {
  baseUrl: Option.none(),
  apiKey: Option.none(),
  model: "gpt-4o-mini-tts",
  voice: "alloy",
  supportsInstructions: false,
  timeout: Duration.millis(60_000),
  maxAudioBytes: 10 * 1024 * 1024
}

const trimmedOr = (name: string, fallback: string) =>
  Config.String(name).pipe(Config.withDefault(""), Config.map((value) => (value.trim() === "" ? fallback : value.trim())))

const fromEnv: Config.Config<SpeechSettings> = Config.all({
  baseUrl: baseUrlSetting("SPEECH_BASE_URL"),
  apiKey: optionalSecret("SPEECH_API_KEY"),
  model: trimmedOr("SPEECH_MODEL", defaultSpeechSettings.model),
  voice: trimmedOr("SPEECH_VOICE", defaultSpeechSettings.voice),
  supportsInstructions: flagSetting("SPEECH_SUPPORTS_INSTRUCTIONS"),
  timeout: millisSetting("SPEECH_TIMEOUT_MS", { default: 60_000, min: 1_000 })
}).pipe(Config.map((settings) => ({ ...defaultSpeechSettings, ...settings })))

export class SpeechConfig extends Context.Service<SpeechConfig, SpeechSettings>()("loopcord/config/SpeechConfig") {
  static readonly layer = Layer.effect(SpeechConfig, fromEnv)
  static readonly make = (overrides: Partial<SpeechSettings> = {}) =>
    Layer.succeed(SpeechConfig, { ...defaultSpeechSettings, ...overrides })
}
