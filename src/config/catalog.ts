import { ConfigProvider, Effect, Layer } from "effect"
import { anthropicPromptCacheSetting, httpProviderSettings, novelAiSettings } from "./HttpProviderConfig"
import { ChatConfig } from "./ChatConfig"
import { ContextConfig } from "./ContextConfig"
import { CredentialConfig } from "./CredentialConfig"
import { DiscordConfig } from "./DiscordConfig"
import { DraftingConfig } from "./DraftingConfig"
import { FetchConfig } from "./FetchConfig"
import { loggingSettings } from "./LoggingConfig"
import { ImageConfig } from "./ImageConfig"
import { LoopConfig } from "./LoopConfig"
import { McpConfig } from "./McpConfig"
import { mediaDirSetting } from "./MediaDirConfig"
import { modelChoicesSetting } from "./ModelChoiceConfig"
import { OpsConfig } from "./OpsConfig"
import { personaSetting } from "./PersonaConfig"
import { providerSettings, scriptSourceSetting } from "./ProviderConfig"
import { runEnvSetting } from "./RunEnv"
import { SearchConfig } from "./SearchConfig"
import { ServerSettingsConfig } from "./ServerSettingsConfig"
import { SpeechConfig } from "./SpeechConfig"
import { recordedSettingFacts } from "./settings"
import { StoreConfig } from "./StoreConfig"
import { VisionConfig } from "./VisionConfig"

/**
 * The settings catalogue: what `--help` prints and the README's table follows.
 *
 * - Which variables exist comes from the Config definitions themselves: `settingDefinitions` are
 *   evaluated against a recording ConfigProvider, so a new setting shows up without a second list.
 * - Defaults of settings built with the helpers of `settings.ts` come from the helper call.
 * - Meanings (and the defaults of other settings) come from `SETTING_DOCS` below; the catalogue
 *   test fails, naming the variable, when a setting has no entry or an entry's default is not the
 *   definition's real default.
 *
 * Adding a setting: define it where it belongs (a helper of `settings.ts` when it fits), make
 * sure its Config is reached from `settingDefinitions`, and add its row to `SETTING_DOCS`.
 */

const SETTING_GROUPS = [
  "Model provider",
  "Tool loop",
  "Chat",
  "Persona",
  "Discord",
  "Web tools",
  "MCP servers",
  "Images and voice",
  "Storage",
  "Credentials",
  "Logging",
  "Operations"
] as const
type SettingGroup = typeof SETTING_GROUPS[number]

interface SettingDoc {
  readonly group: SettingGroup
  readonly meaning: string
  /**
   * The default as shown, for a setting not built with the `settings.ts` helpers; `undefined`
   * means "unset" (optional). Checked against the definition by the catalogue test.
   */
  readonly default?: string
  /** What happens when an optional setting (no default) is unset, when "unset" says too little. */
  readonly unset?: string
  /** The default is worked out from other settings; shown as written, not checked. */
  readonly derivedDefault?: string
  /** A credential: never printed (nothing is printed from the environment anyway). */
  readonly secret?: boolean
}

export const SETTING_DOCS: Readonly<Record<string, SettingDoc>> = {
  LLM_PROVIDER: { group: "Model provider", meaning: "openai-compatible, openai-responses, anthropic, google, novelai or scripted", default: "openai-compatible" },
  LLM_BASE_URL: { group: "Model provider", meaning: "provider base URL, e.g. http://127.0.0.1:11434/v1", unset: "OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's public API" },
  LLM_API_KEYS: { group: "Model provider", meaning: "comma-separated API keys, the rotation pool", unset: "OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY", secret: true },
  LLM_MODELS: { group: "Model provider", meaning: "comma-separated: the primary model, then the fallback chain (required except for scripted)", default: "" },
  LLM_MODELS_ALLOWED: { group: "Model provider", meaning: "comma-separated models a server may choose with /model (the models of LLM_MODELS always), or * for any", unset: "the models of LLM_MODELS" },
  LLM_TOOL_CALLING: { group: "Model provider", meaning: "native, or verbatim (tool calls parsed from the text)", default: "native" },
  LLM_SCRIPT: { group: "Model provider", meaning: "scripted provider only: passes to replay, inline JSON or a JSON file", unset: "echo the user" },
  OPENAI_API_KEY: { group: "Model provider", meaning: "the key for openai-compatible when LLM_API_KEYS is unset", secret: true },
  OPENAI_BASE_URL: { group: "Model provider", meaning: "the base URL for openai-compatible when LLM_BASE_URL is unset" },
  ANTHROPIC_API_KEY: { group: "Model provider", meaning: "the key for anthropic when LLM_API_KEYS is unset", secret: true },
  ANTHROPIC_BASE_URL: { group: "Model provider", meaning: "the base URL for anthropic when LLM_BASE_URL is unset" },
  GEMINI_API_KEY: { group: "Model provider", meaning: "the key for google when LLM_API_KEYS is unset", secret: true },
  BOT_JSON_REPAIR_MAX_CHARS: { group: "Model provider", meaning: "longest tool-argument payload one call may stream (beyond it the stream stops and the call is refused as truncated), and the longest cut one that is repaired" },
  ANTHROPIC_PROMPT_CACHE: { group: "Model provider", meaning: "on or off: prompt-caching breakpoints for LLM_PROVIDER=anthropic", default: "on" },
  NOVELAI_FRAGMENT_TOKENS: { group: "Model provider", meaning: "LLM_PROVIDER=novelai: output tokens one NovelAI request asks for" },
  NOVELAI_MAX_OUTPUT_TOKENS: { group: "Model provider", meaning: "LLM_PROVIDER=novelai: the output budget of one reply, across its fragments" },
  LLM_CONTEXT_TOKENS: {
    group: "Model provider",
    meaning: "context windows in tokens: one number for every model, or model=tokens pairs (e.g. 16384,qwen3:8b=32768); a model's server, the built-in table or 8192 otherwise",
    default: ""
  },
  CONTEXT_COMPACTION: { group: "Model provider", meaning: "elide or summarize: when eliding older tool results is not enough, the oldest tool calls are left out, or summarised by the model", default: "elide" },
  VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS: { group: "Model provider", meaning: "text held back while a verbatim tool call may be starting (a non-positive value: the default)", default: "8192" },

  TOOL_EXECUTION_TIMEOUT_MS: { group: "Tool loop", meaning: "per tool call, fresh for each call" },
  STREAM_SDK_CALL_TIMEOUT_MS: { group: "Tool loop", meaning: "stream inactivity budget once content arrives" },
  STREAM_FIRST_TOKEN_TIMEOUT_MS: { group: "Tool loop", meaning: "budget until the first token (min 10000)", derivedDefault: "max(STREAM_SDK_CALL_TIMEOUT_MS, 300000)" },
  STREAM_MAX_REASONING_CHARS: { group: "Tool loop", meaning: "reasoning one pass keeps for the thought log; a provider reasoning on past it is stopped and the pass ends cut" },
  BOT_MAX_FUNCTION_CALL_ITERATIONS: { group: "Tool loop", meaning: "passes per attempt before the turn ends as timeout" },
  BOT_MAX_CONSECUTIVE_TOOL_ERRORS: { group: "Tool loop", meaning: "consecutive tool failures before the turn ends as error" },
  MAX_TOOL_CALLS_PER_PASS: { group: "Tool loop", meaning: "tool calls of one model pass that run; further calls of that pass are answered with a refusal" },
  TOOL_CALL_CONCURRENCY: { group: "Tool loop", meaning: "tool calls of one pass that run at the same time (tools that change turn state still run one at a time)" },

  CHANNEL_QUEUE_MAX: { group: "Chat", meaning: "replies that may wait per channel; a message beyond folds into the newest waiting reply" },
  RESPONSE_DRAFTING: { group: "Chat", meaning: "on: every reply is held as a draft and posted once a reviewer model approves it", default: "off" },
  RESPONSE_REVIEW_MODEL: { group: "Chat", meaning: "the reviewer model of Response Drafting", unset: "the attempt's own model" },

  BOT_PERSONA_NAME: { group: "Persona", meaning: "the persona's name; set, Discord replies come as the persona through a channel webhook", unset: "loopcord, as the bot" },
  BOT_SYSTEM_PROMPT: { group: "Persona", meaning: "the system prompt", unset: "a short helpful-assistant prompt" },
  BOT_PERSONA_AVATAR_URL: { group: "Persona", meaning: "the persona's avatar, an https:// image URL" },

  DISCORD_TOKEN: { group: "Discord", meaning: "bot token; set, npm start runs the Discord bot, else the terminal chat", secret: true },
  DISCORD_API_BASE_URL: { group: "Discord", meaning: "Discord REST base", unset: "Discord's; tests point it at a loopback fake" },
  DISCORD_COMMAND_GUILD_ID: { group: "Discord", meaning: "register slash commands in this server only (instant; for development)" },
  THOUGHT_LOG_CHANNEL_ID: { group: "Discord", meaning: "channel for hidden operator notices", unset: "logged" },
  DISCORD_MAX_MESSAGES_PER_TURN: { group: "Discord", meaning: "most Discord messages one reply's text may take; a longer reply is cut with a marker" },
  DISCORD_REPLY_CHAIN_MAX: { group: "Discord", meaning: "messages of a reply chain beyond the recent history brought into the context (0: none; at most 50)" },
  DISCORD_ALLOW_DMS: { group: "Discord", meaning: "true or false: the bot answers direct messages", default: "true" },
  TOOL_APPROVAL_TIMEOUT_MS: { group: "Discord", meaning: "how long a tool a server marked with /approvals waits for Approve / Deny before it is denied" },
  DISCORD_SHARD_IDS: { group: "Discord", meaning: "the shards this host runs, e.g. 0-3 or 0,2 (needs DISCORD_SHARD_COUNT; several hosts split one bot)" },
  DISCORD_SHARD_COUNT: { group: "Discord", meaning: "the bot's total shards across every host (alone: all of them here)" },
  DISCORD_GLOBAL_REQUESTS_PER_SECOND: { group: "Discord", meaning: "REST requests per second for the whole bot token (Discord allows 50); one budget per host, each host taking its share of the shards" },

  RUN_ENV: { group: "Web tools", meaning: "production, or development (private networks for fetch_url, a 50 MB body cap)", default: "production" },
  FETCH_URL_ALLOW_PRIVATE_NETWORK: { group: "Web tools", meaning: "true/1/yes/on: fetch_url may reach private addresses in production" },
  FETCH_URL_ENGINE_ORDER: { group: "Web tools", meaning: "comma list of crawl4ai, safe_http (safe_http is always last)" },
  FETCH_URL_MAX_CONTENT_LENGTH: { group: "Web tools", meaning: "characters returned per fetch_url slice" },
  FETCH_URL_TIMEOUT_MS: { group: "Web tools", meaning: "one safe_http fetch, redirects included" },
  MAX_FETCH_SIZE_MB: { group: "Web tools", meaning: "body byte cap after decompression", derivedDefault: "5 in production, 50 in development" },
  USER_REMOTE_FETCH_MAX_REDIRECTS: { group: "Web tools", meaning: "redirect hops, each revalidated (a non-positive value: the default)", default: "3" },
  CRAWL4AI_BASE_URL: { group: "Web tools", meaning: "Crawl4AI server, used only where private fetching is permitted" },
  SEARXNG_BASE_URL: { group: "Web tools", meaning: "SearXNG instance for web_search" },
  BRAVE_API_KEY: { group: "Web tools", meaning: "Brave Search key (Brave is used only when set)", secret: true },
  BRAVE_API_BASE_URL: { group: "Web tools", meaning: "Brave Search base URL", default: "https://api.search.brave.com" },
  DUCKDUCKGO_BASE_URL: { group: "Web tools", meaning: "DuckDuckGo HTML endpoint, the keyless fallback", default: "https://html.duckduckgo.com" },

  MCP_SERVERS: { group: "MCP servers", meaning: "JSON array of global MCP servers [{\"name\",\"url\",\"transport?\",\"command?\",\"args?\"}]", default: "" },
  GUILD_MCP_CONNECT_TIMEOUT_MS: { group: "MCP servers", meaning: "per guild transport attempt", default: "15000" },
  GUILD_MCP_EXECUTION_TIMEOUT_MS: { group: "MCP servers", meaning: "per guild MCP call", default: "30000" },
  GUILD_MCP_FAILURE_COOLDOWN_MS: { group: "MCP servers", meaning: "quarantine after a failed connect", default: "300000" },
  GUILD_MCP_CONNECTION_TTL_MINUTES: { group: "MCP servers", meaning: "idle pooled connections are closed after", default: "10" },
  MCP_STARTUP_WAIT_MS: { group: "MCP servers", meaning: "start-up waits this long for each global server's first connect attempt" },
  GUILD_MCP_ALLOW_PRIVATE_NETWORK: { group: "MCP servers", meaning: "true/1/yes/on: /mcp add servers may be on loopback, private or reserved addresses" },
  GUILD_MCP_MAX_TOOLS: { group: "MCP servers", meaning: "tools kept per guild MCP server; the rest are skipped with a warning" },
  MCP_RESULT_MAX_CHARS: { group: "MCP servers", meaning: "characters of an MCP tool result passed to the model; longer ones are cut" },
  SMITHERY_API_KEY: { group: "MCP servers", meaning: "reach *.run.tools servers through Smithery Connect; the key goes to Smithery only", secret: true },
  SMITHERY_API_BASE_URL: { group: "MCP servers", meaning: "Smithery Connect base URL", default: "https://api.smithery.ai" },
  SMITHERY_NAMESPACE: { group: "MCP servers", meaning: "a fixed Smithery namespace", unset: "the account's first" },

  IMAGE_BACKEND: { group: "Images and voice", meaning: "openai (OpenAI Images API and compatible) or comfyui", unset: "no generate_image" },
  IMAGE_BASE_URL: { group: "Images and voice", meaning: "the image server", derivedDefault: "https://api.openai.com/v1 for openai; required for comfyui" },
  IMAGE_API_KEY: { group: "Images and voice", meaning: "bearer key of the image server", unset: "none sent", secret: true },
  IMAGE_MODEL: { group: "Images and voice", meaning: "image model for openai", derivedDefault: "gpt-image-1" },
  COMFYUI_WORKFLOW: { group: "Images and voice", meaning: "comfyui: an API-format workflow, inline JSON or a file path, with %prompt% placeholders" },
  IMAGE_DEFAULT_POSITIVE_TAGS: { group: "Images and voice", meaning: "default positive image tags (a server's /image-tags replaces them)", default: "" },
  IMAGE_DEFAULT_NEGATIVE_TAGS: { group: "Images and voice", meaning: "default negative image tags (backends with a negative prompt only)", default: "" },
  IMAGE_TIMEOUT_MS: { group: "Images and voice", meaning: "one image generation, uploads and download included" },
  SPEECH_BASE_URL: { group: "Images and voice", meaning: "OpenAI-compatible speech endpoint (…/v1)", unset: "no generate_voice_message" },
  SPEECH_API_KEY: { group: "Images and voice", meaning: "key of the speech endpoint", unset: "none sent", secret: true },
  SPEECH_MODEL: { group: "Images and voice", meaning: "speech model", default: "gpt-4o-mini-tts" },
  SPEECH_VOICE: { group: "Images and voice", meaning: "speech voice", default: "alloy" },
  SPEECH_SUPPORTS_INSTRUCTIONS: { group: "Images and voice", meaning: "true: the endpoint follows instructions, so voice_instructions is offered" },
  SPEECH_TIMEOUT_MS: { group: "Images and voice", meaning: "one synthesis" },
  VISION_MODEL: { group: "Images and voice", meaning: "the model analyze_image asks", unset: "the primary model" },
  VISION_ANALYSIS_TIMEOUT_MS: { group: "Images and voice", meaning: "one analyze_image call, downloads and inference together" },
  VISION_MAX_IMAGE_MB: { group: "Images and voice", meaning: "largest image downloaded or attached" },
  LLM_VISION_MODELS: { group: "Images and voice", meaning: "comma list of models sent the conversation's images, * for all; others see a placeholder" },
  MEDIA_DIR: { group: "Images and voice", meaning: "where the terminal saves generated images and voice messages", default: "./data/media" },

  DATABASE_URL: { group: "Storage", meaning: "sqlite:PATH, sqlite::memory: or postgres://… (PostgreSQL: shared by several hosts)", default: "sqlite:./data/loopcord.db" },
  STORE_TIMEOUT_MS: { group: "Storage", meaning: "longest one database call may take" },

  LOOPCORD_SECRET_KEY: { group: "Credentials", meaning: "32 bytes in base64: seals personal and server API keys, guild MCP headers and guild MCP URL paths and queries in the database", unset: "/key, MCP headers and MCP URLs with a secret path or query are refused", secret: true },
  LOOPCORD_SECRET_KEY_PREVIOUS: { group: "Credentials", meaning: "the key being rotated out: what it sealed is re-sealed under LOOPCORD_SECRET_KEY", secret: true },
  SERVER_MESSAGE_COOLDOWN_MS: { group: "Credentials", meaning: "least time between two server-paid turns of one user in one server (0: off)" },
  SERVER_DAILY_TURN_QUOTA: { group: "Credentials", meaning: "server-paid turns per server per UTC day (0: unlimited)" },
  USER_DAILY_TURN_QUOTA: { group: "Credentials", meaning: "server-paid turns per user per server per UTC day (0: unlimited)" },

  LOG_LEVEL: { group: "Logging", meaning: "trace, debug, info, warn, error, fatal or none (the interactive chat: warn)", default: "info" },
  LOG_FORMAT: { group: "Logging", meaning: "pretty or json; logs always go to stderr", derivedDefault: "json when RUN_ENV=production, else pretty" },

  OTEL_EXPORTER_OTLP_ENDPOINT: { group: "Operations", meaning: "OpenTelemetry collector (OTLP/HTTP) base URL: traces, metrics and logs are exported when set" },
  OTEL_EXPORTER_OTLP_HEADERS: { group: "Operations", meaning: "key=value,… headers sent to the collector (e.g. authorization)", secret: true },
  OTEL_SERVICE_NAME: { group: "Operations", meaning: "service.name of the exported telemetry", default: "loopcord" },
  HEALTH_PORT: { group: "Operations", meaning: "serve /healthz, /readyz and /metrics (Prometheus) on this port", unset: "off" },
  HEALTH_HOST: { group: "Operations", meaning: "address the health server listens on", default: "0.0.0.0" },
  SHUTDOWN_GRACE_MS: { group: "Operations", meaning: "after SIGTERM/SIGINT, how long running replies may finish before they are stopped" }
}

/**
 * Every Config the application reads, each evaluated whole: what the recording provider sees
 * is exactly what start-up reads. A new config module is added here.
 */
export const settingDefinitions: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
  providerSettings,
  modelChoicesSetting,
  scriptSourceSetting,
  httpProviderSettings,
  anthropicPromptCacheSetting,
  novelAiSettings,
  runEnvSetting,
  personaSetting,
  loggingSettings,
  mediaDirSetting,
  // Each layer built on its own: one that fails (a required variable unset) must not stop the others being read.
  Effect.scoped(Layer.build(LoopConfig.layer)),
  Effect.scoped(Layer.build(ChatConfig.layer)),
  Effect.scoped(Layer.build(ContextConfig.layer)),
  Effect.scoped(Layer.build(StoreConfig.layer)),
  Effect.scoped(Layer.build(CredentialConfig.layer)),
  Effect.scoped(Layer.build(DraftingConfig.layer)),
  Effect.scoped(Layer.build(ImageConfig.layer)),
  Effect.scoped(Layer.build(SpeechConfig.layer)),
  Effect.scoped(Layer.build(VisionConfig.layer)),
  Effect.scoped(Layer.build(FetchConfig.layer)),
  Effect.scoped(Layer.build(SearchConfig.layer)),
  Effect.scoped(Layer.build(McpConfig.layer)),
  Effect.scoped(Layer.build(DiscordConfig.layer)),
  Effect.scoped(Layer.build(ServerSettingsConfig.layer)),
  Effect.scoped(Layer.build(OpsConfig.layer))
]

/** A provider where nothing is set, which notes every variable asked for (in the order asked). */
const recordingProvider = (seen: Set<string>): ConfigProvider.ConfigProvider =>
  ConfigProvider.make((path) =>
    Effect.sync(() => {
      seen.add(path.join("_"))
      return undefined
    })
  )

/** The variables the definitions read, in the order they are read. */
export const definedVariables: Effect.Effect<ReadonlyArray<string>> = Effect.suspend(() => {
  const seen = new Set<string>()
  return Effect.forEach(settingDefinitions, (definition) => Effect.result(definition), { discard: true }).pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, recordingProvider(seen)),
    Effect.andThen(Effect.sync(() => [...seen]))
  )
})

interface CatalogEntry {
  readonly name: string
  readonly group: SettingGroup | "Undocumented"
  readonly meaning: string
  /** As shown: a value, `(empty)`, a derivation, or undefined for "unset". */
  readonly defaultText: string | undefined
  /** For an optional setting: what unset means. */
  readonly unsetText: string | undefined
  readonly min: number | undefined
}

/** The catalogue: every defined variable with its meaning and default, in group order. */
export const settingsCatalog: Effect.Effect<ReadonlyArray<CatalogEntry>> = Effect.map(definedVariables, (names) => {
  const facts = recordedSettingFacts()
  const entries = names.map((name): CatalogEntry => {
    const doc = SETTING_DOCS[name]
    const fact = facts.get(name)
    return {
      name,
      group: doc?.group ?? "Undocumented",
      meaning: doc?.meaning ?? "(undocumented: add it to SETTING_DOCS in src/config/catalog.ts)",
      defaultText: doc?.derivedDefault ?? fact?.default ?? doc?.default,
      unsetText: doc?.unset,
      min: fact?.min
    }
  })
  const order = (entry: CatalogEntry) => {
    const index = SETTING_GROUPS.indexOf(entry.group as SettingGroup)
    return index < 0 ? SETTING_GROUPS.length : index
  }
  return entries.map((entry, index) => ({ entry, index }))
    .sort((a, b) => order(a.entry) - order(b.entry) || a.index - b.index)
    .map(({ entry }) => entry)
})

const describeDefault = (entry: CatalogEntry): string => {
  if (entry.defaultText === undefined) return entry.unsetText === undefined ? "unset" : `unset: ${entry.unsetText}`
  const value = entry.defaultText === "" ? "default: empty" : `default: ${entry.defaultText}`
  return entry.min === undefined ? value : `${value}, min ${entry.min}`
}

/** The environment part of `--help`: one line per variable, `NAME  meaning (default)`, grouped. */
export const renderSettings = (entries: ReadonlyArray<CatalogEntry>): string => {
  const width = Math.max(...entries.map((entry) => entry.name.length)) + 2
  const lines: Array<string> = []
  let group: string | undefined
  for (const entry of entries) {
    if (entry.group !== group) {
      group = entry.group
      lines.push("", `${group}:`)
    }
    lines.push(`  ${entry.name.padEnd(width)}${entry.meaning} [${describeDefault(entry)}]`)
  }
  return lines.join("\n")
}
