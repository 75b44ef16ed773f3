/**
 * A small immutable map for per-channel / per-guild state of the Discord front (every such map is
 * bounded or expires: docs/architecture.md, Bounded state at the Discord front): each entry lives
 * `ttlMs` after it was last set, and beyond `maxEntries` the entry set longest ago is dropped.
 * Pure: the caller keeps it in a Ref and passes the Clock's time.
 */
interface CacheBounds {
  readonly ttlMs: number
  readonly maxEntries: number
}

interface Entry<V> {
  readonly value: V
  readonly expiresAt: number
}

/** Map order is the order of the last set; with one TTL that is also the order of expiry. */
export type BoundedCache<V> = ReadonlyMap<string, Entry<V>>

export const emptyCache = <V>(): BoundedCache<V> => new Map()

/** The live value under `key`, if any. */
export const cacheGet = <V>(cache: BoundedCache<V>, key: string, now: number): V | undefined => {
  const entry = cache.get(key)
  return entry === undefined || entry.expiresAt <= now ? undefined : entry.value
}

/** `cache` with `key` set to `value` (expired entries and the oldest beyond the bound dropped). */
export const cacheSet = <V>(cache: BoundedCache<V>, key: string, value: V, now: number, bounds: CacheBounds): BoundedCache<V> => {
  const next = new Map(cache)
  for (const [id, entry] of next) {
    if (entry.expiresAt > now) break
    next.delete(id)
  }
  next.delete(key)
  next.set(key, { value, expiresAt: now + bounds.ttlMs })
  for (const id of next.keys()) {
    if (next.size <= Math.max(1, bounds.maxEntries)) break
    next.delete(id)
  }
  return next
}

export const cacheDelete = <V>(cache: BoundedCache<V>, key: string): BoundedCache<V> => {
  if (!cache.has(key)) return cache
  const next = new Map(cache)
  next.delete(key)
  return next
}

/** The live keys. */
export const cacheKeys = <V>(cache: BoundedCache<V>, now: number): ReadonlySet<string> =>
  new Set([...cache].flatMap(([key, entry]) => (entry.expiresAt > now ? [key] : [])))
