/**
 * A sliding one-second window of REST requests (pure). Discord counts a bot's requests over any
 * second, so the window holds the time of every request done in the last `windowMs` and the
 * slots granted but not done yet: a grant counts from the moment it is given until its request
 * is answered, and then for `windowMs` more. Discord received the request somewhere in between,
 * so no span of `windowMs` at Discord ever holds more than `limit` of them, whatever the
 * latency.
 */
export interface RequestWindow {
  readonly limit: number
  readonly windowMs: number
  /** Send times still inside the window, oldest first (at most `limit`). */
  readonly sends: ReadonlyArray<number>
  /** Slots granted and neither sent nor given back. */
  readonly reserved: number
}

export const emptyWindow = (limit: number, windowMs = 1000): RequestWindow => ({
  limit: Math.max(1, Math.floor(limit)),
  windowMs,
  sends: [],
  reserved: 0
})

/** Forgets sends that left the window at `now`. */
const prune = (window: RequestWindow, now: number): RequestWindow => {
  const first = window.sends.findIndex((at) => at > now - window.windowMs)
  if (first === 0) return window
  return { ...window, sends: first === -1 ? [] : window.sends.slice(first) }
}

/** Slots free at `now`. */
export const freeSlots = (window: RequestWindow, now: number): number => {
  const current = prune(window, now)
  return current.limit - current.sends.length - current.reserved
}

/** Takes a slot at `now`; undefined when the window is full. */
export const reserve = (window: RequestWindow, now: number): RequestWindow | undefined => {
  const current = prune(window, now)
  return current.sends.length + current.reserved < current.limit ? { ...current, reserved: current.reserved + 1 } : undefined
}

/** A granted slot was used: its request was answered (or failed) at `now`. */
export const commit = (window: RequestWindow, now: number): RequestWindow => {
  const current = prune(window, now)
  return { ...current, reserved: Math.max(0, current.reserved - 1), sends: [...current.sends, now] }
}

/** A granted slot was not used. */
export const release = (window: RequestWindow): RequestWindow => ({ ...window, reserved: Math.max(0, window.reserved - 1) })

/**
 * When a slot frees up next without anyone giving one back: when the oldest send leaves the
 * window. Undefined when only a release can free one (every slot is reserved) or one is free now.
 */
export const nextFreeAt = (window: RequestWindow, now: number): number | undefined => {
  const current = prune(window, now)
  if (current.sends.length + current.reserved < current.limit) return undefined
  // Enough sends must leave for one slot: the (sends + reserved - limit + 1)-th oldest.
  const mustLeave = current.sends.length + current.reserved - current.limit
  const send = current.sends[mustLeave]
  return send === undefined ? undefined : send + current.windowMs
}
