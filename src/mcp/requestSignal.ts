import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { AsyncLocalStorage } from "node:async_hooks"

/**
 * The SDK's per-request `signal` only sends `notifications/cancelled`; the HTTP request that
 * carries the call stays open. To close it on /kill or timeout, the call runs inside
 * `withRequestSignal` and the transport's fetch (wrapped by `abortableFetch`) joins that signal,
 * which follows the call through the SDK's awaits.
 */
const callSignal = new AsyncLocalStorage<AbortSignal>()

export const withRequestSignal = <A>(signal: AbortSignal, run: () => Promise<A>): Promise<A> => callSignal.run(signal, run)

/**
 * Only the POST that carries a `tools/call` joins the signal: async context can leak into
 * callbacks scheduled during a call, and a stream or another server's request must never be
 * cut by a call it does not belong to (nor the cancellation notice itself).
 */
const carriesToolCall = (init: RequestInit | undefined): boolean =>
  init?.method === "POST" && typeof init.body === "string" && init.body.includes('"method":"tools/call"')

export const abortableFetch =
  (fetch: FetchLike): FetchLike =>
  (url, init) => {
    const signal = callSignal.getStore()
    if (signal === undefined || signal.aborted || !carriesToolCall(init)) return fetch(url, init)
    const joined = init?.signal ? AbortSignal.any([init.signal, signal]) : signal
    return fetch(url, { ...init, signal: joined })
  }
