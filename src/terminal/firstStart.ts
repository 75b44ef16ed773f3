import { Config, ConfigProvider, Effect, Option } from "effect"
import { settingsProvider } from "../config/dotenv"
import { DEFAULT_LOCAL_SERVERS, type FoundServer, parseLocalServerList, probeLocalServers } from "./localModelServers"

/**
 * A first start that just works: `npm start` with nothing configured looks for a model server
 * on this machine and chats with it, or opens the scripted demo and says how to configure a real
 * provider. Anything set (a provider, a model, a key, a URL, a Discord token) is an explicit
 * configuration: it is used as it is, and a bad value still stops start-up with its one line.
 */

/** The variables whose presence means "configured". */
const CONFIGURING = [
  "LLM_PROVIDER",
  "LLM_MODELS",
  "LLM_BASE_URL",
  "LLM_API_KEYS",
  "LLM_SCRIPT",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "GEMINI_API_KEY",
  "DISCORD_TOKEN"
] as const

const isSet = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map(Option.exists((value) => value.trim().length > 0)))

/** None of the provider and Discord variables is set (in the environment or `.env`). */
export const nothingConfigured: Config.Config<boolean> = Config.all(CONFIGURING.map(isSet)).pipe(Config.map((set) => set.every((value) => !value)))

/** Where to look (tests point it at their own loopback ports; read only on a first start). */
const localServerCandidates = Config.option(Config.String("LOOPCORD_LOCAL_MODEL_SERVERS")).pipe(
  Config.map(Option.match({ onNone: () => DEFAULT_LOCAL_SERVERS, onSome: (raw) => parseLocalServerList(raw) ?? DEFAULT_LOCAL_SERVERS }))
)

/** What a first start runs with: settings standing in for the missing ones, and the lines said first. */
interface FirstStart {
  readonly settings: ReadonlyMap<string, string>
  readonly banner: ReadonlyArray<string>
}

export const DEMO_BANNER: ReadonlyArray<string> = [
  "No model is configured, and no Ollama (11434), LM Studio (1234) or llama.cpp (8080) answered on this machine: this is the scripted demo (it echoes you).",
  "To chat with a real model, put LLM_BASE_URL, LLM_MODELS and LLM_API_KEYS in ./.env (e.g. https://api.openai.com/v1, gpt-4o-mini, sk-…),",
  "or start a local model server and run npm start again. npm start -- --help lists every setting; add DISCORD_TOKEN for the Discord bot."
]

const foundBanner = (server: FoundServer): ReadonlyArray<string> => {
  const [model] = server.models
  const others = server.models.length - 1
  return [
    `Found ${server.label} on this machine (${server.origin}): chatting with its model ${model}.` +
    (others > 0 ? ` /model switches to one of its ${others} other model${others === 1 ? "" : "s"}.` : ""),
    "Set LLM_BASE_URL and LLM_MODELS (in ./.env) to use another provider; npm start -- --help lists every setting."
  ]
}

/** The settings a found server stands in for: its OpenAI-compatible API, its loaded model, its others allowed. */
const foundSettings = (server: FoundServer): ReadonlyMap<string, string> =>
  new Map([
    ["LLM_PROVIDER", "openai-compatible"],
    ["LLM_BASE_URL", `${server.origin}/v1`],
    ["LLM_MODELS", server.models[0] ?? ""],
    ["LLM_MODELS_ALLOWED", server.models.join(",")]
  ])

/** Probes the local servers: the one found, or the scripted demo. */
export const planFirstStart: Effect.Effect<FirstStart> = Effect.gen(function*() {
  const candidates = yield* Effect.orElseSucceed(localServerCandidates, () => DEFAULT_LOCAL_SERVERS)
  const found = yield* probeLocalServers(candidates)
  return Option.match(found, {
    onNone: (): FirstStart => ({ settings: new Map([["LLM_PROVIDER", "scripted"]]), banner: DEMO_BANNER }),
    onSome: (server): FirstStart => ({ settings: foundSettings(server), banner: foundBanner(server) })
  })
})

/** Runs `effect` with the first start's settings over the current ones (which set none of them). */
export const withFirstStartSettings = <A, E, R>(plan: FirstStart, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(ConfigProvider.ConfigProvider, (current) =>
    Effect.provideService(
      effect,
      ConfigProvider.ConfigProvider,
      settingsProvider(Object.fromEntries(plan.settings)).pipe(ConfigProvider.orElse(current))
    ))
