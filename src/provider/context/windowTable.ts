/**
 * Context windows (tokens, prompt and output together) of the well-known model families, as
 * their vendors publish them, matched by model-name prefix: the longest matching prefix wins.
 * A name is matched lower-cased, without a route prefix (`openai/gpt-4o` on OpenRouter,
 * `meta-llama/Llama-3.1-8B-Instruct` on vLLM) and without a leading `meta-`; Ollama tags
 * (`qwen3:8b`) match their family. A self-hosted server's own answer (discovery) wins over
 * this table: a local server often runs a model with a smaller window than its family's.
 */
const TABLE: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  // OpenAI
  ["gpt-5", 400_000],
  ["gpt-5-chat", 128_000],
  ["gpt-4.1", 1_047_576],
  ["gpt-4.5", 128_000],
  ["gpt-4o", 128_000],
  ["chatgpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-4-1106", 128_000],
  ["gpt-4-0125", 128_000],
  ["gpt-4-32k", 32_768],
  ["gpt-4", 8_192],
  ["gpt-3.5-turbo", 16_385],
  ["gpt-oss", 131_072],
  ["o1", 200_000],
  ["o1-mini", 128_000],
  ["o1-preview", 128_000],
  ["o3", 200_000],
  ["o4-mini", 200_000],
  // Anthropic
  ["claude-", 200_000],
  ["claude-2.0", 100_000],
  ["claude-instant", 100_000],
  // Google
  ["gemini-", 1_048_576],
  ["gemini-1.5-pro", 2_097_152],
  ["gemini-1.0", 32_760],
  ["gemini-pro", 32_760],
  ["gemma-3", 131_072],
  ["gemma3", 131_072],
  ["gemma-2", 8_192],
  ["gemma2", 8_192],
  // Meta Llama
  ["llama-3", 8_192],
  ["llama3", 8_192],
  ["llama-3.1", 131_072],
  ["llama3.1", 131_072],
  ["llama-3.2", 131_072],
  ["llama3.2", 131_072],
  ["llama-3.3", 131_072],
  ["llama3.3", 131_072],
  ["llama-4-scout", 10_000_000],
  ["llama-4-maverick", 1_048_576],
  ["llama4", 1_048_576],
  // Qwen (native windows; YaRN extensions are the server's to declare)
  ["qwen2", 32_768],
  ["qwen2.5", 32_768],
  ["qwen2.5-coder", 32_768],
  ["qwen3", 32_768],
  ["qwen3-coder", 262_144],
  ["qwq", 131_072],
  ["qwen-turbo", 1_000_000],
  ["qwen-plus", 131_072],
  ["qwen-max", 32_768],
  // Mistral
  ["mistral", 32_768],
  ["mistral-large", 131_072],
  ["mistral-medium", 131_072],
  ["mistral-small", 32_768],
  ["mistral-small-3.1", 131_072],
  ["mistral-small3.1", 131_072],
  ["mistral-nemo", 131_072],
  ["open-mistral-nemo", 131_072],
  ["ministral", 131_072],
  ["mixtral-8x7b", 32_768],
  ["mixtral-8x22b", 65_536],
  ["mixtral", 32_768],
  ["codestral", 262_144],
  ["pixtral", 131_072],
  ["magistral", 40_000],
  // DeepSeek
  ["deepseek-chat", 128_000],
  ["deepseek-reasoner", 128_000],
  ["deepseek-v3", 131_072],
  ["deepseek-r1", 131_072],
  ["deepseek-coder-v2", 163_840],
  // NovelAI text models
  ["llama-3-erato", 8_192],
  ["kayra", 8_192],
  ["clio", 8_192]
]

/** The window used when nothing says one: small enough for most servers a self-hoster starts with. */
export const DEFAULT_CONTEXT_TOKENS = 8_192

/** `openai/gpt-4o` ⇒ `gpt-4o`; `Meta-Llama-3.1-8B` ⇒ `llama-3.1-8b`. */
const normalizeModelName = (model: string): string => {
  const lower = model.trim().toLowerCase()
  const base = lower.slice(lower.lastIndexOf("/") + 1)
  return base.startsWith("meta-") ? base.slice("meta-".length) : base
}

const byLength = [...TABLE].sort((a, b) => b[0].length - a[0].length)

/** The published window of the model's family, if the table knows it. */
export const tableWindow = (model: string): number | undefined => {
  const name = normalizeModelName(model)
  return byLength.find(([prefix]) => name.startsWith(prefix))?.[1]
}
