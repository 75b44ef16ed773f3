/**
 * What every contender of the loop benchmarks offers: start a turn from one user message
 * (`turn:<id>:<scenario>`, see loopServer.ts), read its text and status, kill it. The tools are
 * the same everywhere and do the same work:
 *
 * - `echo {text}` returns `{echoed: text}` at once (the zero-cost tool of the overhead runs);
 * - `fetch_slow {id, hang}` GETs `<toolUrl>/slow/<id>` with the abort signal the framework gives
 *   its tools (the tool's outbound socket, observed by the tool server);
 * - `never_tool {}` returns a raw Promise that never settles and ignores every signal;
 * - `slow_a`, `slow_b`, `slow_c` `{id, ms}` each GET `<toolUrl>/slow/<id>?ms=<ms>` (answered
 *   after `ms`): three distinct slow tools for one pass of parallel calls.
 */
import { request } from "undici"

export type SlowToolName = "slow_a" | "slow_b" | "slow_c"
export type BenchToolName = "echo" | "fetch_slow" | "never_tool" | SlowToolName
export const slowToolNames: ReadonlyArray<SlowToolName> = ["slow_a", "slow_b", "slow_c"]

export const SYSTEM_PROMPT = "You are a benchmark. Call the tools you are asked to call."
export const MODEL = "bench-model"
export const API_KEY = "bench-key"

export const toolDescriptions: Record<BenchToolName, string> = {
  echo: "Echoes the text back",
  fetch_slow: "Fetches a slow page from the tool server",
  never_tool: "A tool that never returns",
  slow_a: "Looks up record A on the slow tool server",
  slow_b: "Looks up record B on the slow tool server",
  slow_c: "Looks up record C on the slow tool server"
}

export interface ContenderOptions {
  /** OpenAI-compatible base URL (`…/v1`). */
  readonly baseUrl: string
  /** Tool server origin for `fetch_slow`. */
  readonly toolUrl: string
  readonly tools: ReadonlyArray<BenchToolName>
  /** Model calls allowed per turn: the same cap for every contender. */
  readonly maxSteps: number
  /** Per-tool-call timeout, for contenders that have one (loopcord: TOOL_EXECUTION_TIMEOUT_MS). */
  readonly toolTimeoutMs?: number
}

export interface TurnOutcome {
  /** Every text delta the consumer saw, concatenated. */
  readonly text: string
  /** The contender's own word for how the turn ended (`completed`, `stopped_by_user`, `aborted`…). */
  readonly status: string
}

export interface TurnHandle {
  readonly done: Promise<TurnOutcome>
  readonly kill: () => void
  /** `process.hrtime` (ns) at which the consumer received the first text delta. */
  readonly firstDeltaAt: () => number | undefined
}

export interface Contender {
  readonly name: string
  readonly start: (message: string) => TurnHandle
  readonly close: () => Promise<void>
}

export const nowNs = (): number => Number(process.hrtime.bigint())

/** `fetch_slow`: one HTTP GET to the tool server, cancelled by `signal`. */
export const fetchSlow = async (
  toolUrl: string,
  args: { readonly id: string; readonly hang: boolean },
  signal: AbortSignal | undefined
): Promise<{ readonly fetched: string }> => {
  const response = await request(`${toolUrl}/slow/${encodeURIComponent(args.id)}${args.hang ? "?hang=1" : ""}`, {
    method: "GET",
    ...(signal === undefined ? {} : { signal })
  })
  return (await response.body.json()) as { readonly fetched: string }
}

/** `slow_a`, `slow_b`, `slow_c`: one HTTP GET the tool server answers after `ms`, cancelled by `signal`. */
export const slowLookup = async (
  toolUrl: string,
  args: { readonly id: string; readonly ms: number },
  signal: AbortSignal | undefined
): Promise<{ readonly fetched: string }> => {
  const response = await request(`${toolUrl}/slow/${encodeURIComponent(args.id)}?ms=${args.ms}`, {
    method: "GET",
    ...(signal === undefined ? {} : { signal })
  })
  return (await response.body.json()) as { readonly fetched: string }
}

/** `never_tool`: settles never, whatever signal it is given. */
export const neverSettles = (): Promise<never> => new Promise<never>(() => {})
