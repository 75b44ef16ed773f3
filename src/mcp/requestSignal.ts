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

export const abortableFetch =
  (fetch: FetchLike): FetchLike =>
  (url, init) => {
    const signal = callSignal.getStore()
    // Already aborted: this request is the cancellation notice itself (or work scheduled from a
    // finished call's context), which must still go out.
    if (signal === undefined || signal.aborted) return fetch(url, init)
    const joined = init?.signal ? AbortSignal.any([init.signal, signal]) : signal
    return fetch(url, { ...init, signal: joined })
  }
