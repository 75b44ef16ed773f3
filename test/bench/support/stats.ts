/** Percentiles, formatting and the machine-load line every loop benchmark prints. */
import { cpus, loadavg } from "node:os"

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for none. */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

export const ms = (ns: number): number => ns / 1e6

/** A number with sensible precision for a table cell. */
export const fmt = (value: number, digits = 2): string =>
  Number.isNaN(value) ? "n/a" : !Number.isFinite(value) ? "∞" : value >= 100 ? value.toFixed(0) : value.toFixed(digits)

export const ratio = (ours: number, theirs: number): string =>
  Number.isFinite(ours) && Number.isFinite(theirs) && theirs > 0 ? (ours / theirs).toFixed(2) : "n/a"

export const loadLine = (): string => {
  const [one, five] = loadavg()
  return `Machine: ${cpus().length} cores, load average ${one!.toFixed(2)} (1 min) / ${five!.toFixed(2)} (5 min) when the section started; Node ${process.version}.`
}

export const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run with --expose-gc (npm run bench does)")
  collect()
}

/** Several full collections with a tick between them, so finalizers and weak refs settle. */
export const settleHeap = async (): Promise<void> => {
  for (let round = 0; round < 3; round += 1) {
    gc()
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** `promise`, or undefined after `millis`; the timer is cleared either way (no handle left behind). */
export const within = <A>(promise: Promise<A>, millis: number): Promise<A | undefined> => {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), millis)))
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer))
}

/** Fails loudly (the bench prints FAILED) when a correctness check does not hold. */
export const check = (condition: boolean, message: string): void => {
  if (!condition) throw new Error(`check failed: ${message}`)
}
