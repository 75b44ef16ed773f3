import { AsyncLocalStorage } from "node:async_hooks"
import type { RESTOptions } from "discord.js"
import { Effect, Exit, Fiber, Metric } from "effect"
import { discordRateLimitedTotal } from "../ops/metrics"
import type { BudgetSlot, RequestBudgetService } from "./RequestBudget"
import { isExemptFromGlobalLimit, laneOfRoute, type RequestLane } from "./RequestLane"

/**
 * What a caller says about the discord.js call it makes: its lane, and maybe a slot it already
 * holds (taken before it read the text to send, so what goes out is the newest text). discord.js
 * gives its request function no per-call options, so the context travels with the call's async
 * context; discord.js's own awaits keep it. A held slot pays for the first request only: a retry
 * discord.js makes after a 5xx or a 429 takes a slot of its own, in the same lane.
 */
interface LaneContext {
  readonly lane: RequestLane
  /** Taken by the first request that leaves (then undefined). */
  held: BudgetSlot | undefined
}

const laneContext = new AsyncLocalStorage<LaneContext>()

/** A slot and its lane, handed to whoever makes the discord.js call (a reply target). */
export interface RequestTicket {
  readonly lane: RequestLane
  readonly slot: BudgetSlot
}

/** Runs `call` under `ticket` (no ticket: the request function reserves by route). */
export const underTicket = <A>(ticket: RequestTicket | undefined, call: () => Promise<A>): Promise<A> =>
  ticket === undefined ? call() : inLane(ticket.lane, ticket.slot, call)

/** Runs `call` (which starts discord.js requests) in `lane`, the first request paid for by `held`. */
export const inLane = <A>(lane: RequestLane, held: BudgetSlot | undefined, call: () => Promise<A>): Promise<A> =>
  laneContext.run({ lane, held }, call)

/**
 * An Effect that makes discord.js calls, in `lane`: a slot is reserved first (waiting its turn),
 * the call runs in its context, and the slot is given back if no request used it.
 */
export const withLane = <A, E>(
  budget: RequestBudgetService,
  lane: RequestLane,
  call: (signal: AbortSignal) => Promise<A>,
  onError: (error: unknown) => E
): Effect.Effect<A, E> => withSlot(budget.reserve(lane), lane, call, onError)

/** As `withLane`, with the slot taken by `slot` (reserved earlier, or within a deadline). */
const withSlot = <A, E>(
  slot: Effect.Effect<BudgetSlot>,
  lane: RequestLane,
  call: (signal: AbortSignal) => Promise<A>,
  onError: (error: unknown) => E
): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    // Waiting for the slot stays interruptible (a stopped turn must not wait for its turn);
    // a slot once had is always given back.
    Effect.interruptible(slot),
    (held) => Effect.tryPromise({ try: (signal) => inLane(lane, held, () => call(signal)), catch: onError }),
    (held) => held.release
  )

/** The route of a request URL: its path after the API version (`/channels/1/messages`). */
const routeOf = (url: string): string => {
  const pathname = new URL(url).pathname
  return /\/v\d+(\/.*)$/.exec(pathname)?.[1] ?? pathname
}

/** Seconds in a header or body value, as milliseconds. */
const toMillis = (value: unknown): number | undefined => {
  const seconds = typeof value === "string" ? Number(value) : typeof value === "number" ? value : Number.NaN
  return Number.isFinite(seconds) ? seconds * 1000 : undefined
}

type ResponseLike = Awaited<ReturnType<RESTOptions["makeRequest"]>>

/** The body of a response that can be read twice (discord.js reads it after us); undefined otherwise. */
const peekJson = (response: ResponseLike): Promise<unknown> =>
  "clone" in response && typeof response.clone === "function"
    ? (response.clone() as Response).json().then((value: unknown) => value, () => undefined)
    : Promise.resolve(undefined)

/** Whether a 429 is Discord's global limit (header, or `"global": true` in the body), and how long to wait. */
const globalLimit = async (response: ResponseLike): Promise<number | undefined> => {
  const headerSays = response.headers.get("x-ratelimit-global") !== null
  const body = await peekJson(response)
  const bodySays = typeof body === "object" && body !== null && "global" in body && body.global === true
  if (!headerSays && !bodySays) return undefined
  const fromBody = typeof body === "object" && body !== null && "retry_after" in body ? toMillis(body.retry_after) : undefined
  return fromBody ?? toMillis(response.headers.get("retry-after")) ?? 1000
}

const abortError = () => new DOMException("The request was aborted while it waited for the request budget", "AbortError")

/** Runs budget effects from discord.js's promise world (a runtime captured by the client's layer). */
type RunFork = <A, E>(effect: Effect.Effect<A, E>) => Fiber.Fiber<A, E>

interface BudgetedRequestOptions {
  readonly budget: RequestBudgetService
  readonly runFork: RunFork
  /** The bot's application id once logged in (its interaction webhooks are exempt). */
  readonly applicationId: () => string | undefined
  readonly inner: RESTOptions["makeRequest"]
}

const settled = <A, E>(fiber: Fiber.Fiber<A, E>): Promise<void> => new Promise((resolve) => fiber.addObserver(() => resolve()))

/**
 * discord.js's request function with every request paid for by the budget: the held slot of
 * the caller's lane, or one reserved here (in the caller's lane, else the route's). Interaction
 * responses are exempt, as Discord exempts them. A 429 is counted; one with the global flag
 * pauses the whole budget.
 */
export const budgetedRequest = (options: BudgetedRequestOptions): RESTOptions["makeRequest"] => async (url, init) => {
  const route = routeOf(url)
  if (options.budget.perSecond === undefined || isExemptFromGlobalLimit(route, options.applicationId())) {
    return observe(options, route, await options.inner(url, init))
  }
  const context = laneContext.getStore()
  const held = context?.held
  if (context !== undefined) context.held = undefined
  const slot = held ?? await waitForSlot(options, context?.lane ?? laneOfRoute(init.method ?? "GET", route), init.signal ?? undefined)
  // The slot stays taken while the request is in flight and the send is stamped when the answer
  // (or the failure) is back. Discord saw the request somewhere in between, so however late it
  // got there (a busy event loop, a slow network), it falls inside what the window counted.
  try {
    return await observe(options, route, await options.inner(url, init))
  } finally {
    await settled(options.runFork(slot.commit))
  }
}

/** Reserves a slot, giving up (and the slot back) when discord.js aborts the request meanwhile (its timeout). */
const waitForSlot = (
  options: BudgetedRequestOptions,
  lane: RequestLane,
  signal: AbortSignal | undefined
): Promise<BudgetSlot> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(abortError())
    const fiber = options.runFork(options.budget.reserve(lane))
    const onAbort = () => {
      options.runFork(Fiber.interrupt(fiber))
      reject(abortError())
    }
    signal?.addEventListener("abort", onAbort, { once: true })
    fiber.addObserver((exit) => {
      signal?.removeEventListener("abort", onAbort)
      if (Exit.isSuccess(exit)) {
        // Aborted while the grant was on its way: the slot goes back.
        if (signal?.aborted === true) options.runFork(exit.value.release)
        else resolve(exit.value)
      }
    })
  })

const observe = async (options: BudgetedRequestOptions, route: string, response: ResponseLike): Promise<ResponseLike> => {
  if (response.status !== 429) return response
  const wait = await globalLimit(response)
  options.runFork(
    wait === undefined
      ? Metric.update(Metric.withAttributes(discordRateLimitedTotal, { scope: "route" }), 1)
      : options.budget.globalRateLimited(wait, route)
  )
  return response
}
