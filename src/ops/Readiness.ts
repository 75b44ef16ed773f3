import { Context, Duration, Effect, Layer, Option, Ref } from "effect"

/** A readiness check: succeeds when its part is ready, fails with why not (one short line). */
export type ReadinessCheck = Effect.Effect<void, string>

interface ReadinessReport {
  readonly ready: boolean
  /** Each expected part: `ok`, or why it is not ready (`starting` before its check is registered). */
  readonly checks: Readonly<Record<string, string>>
}

/** A check that takes longer than this counts as not ready (a hung database must not hang /readyz). */
const CHECK_TIMEOUT = Duration.seconds(2)

interface ReadinessShape {
  /** Adds (or replaces) the check of an expected part; the part is `starting` until then. */
  readonly register: (name: string, check: ReadinessCheck) => Effect.Effect<void>
  /** Every expected part checked, concurrently, each within CHECK_TIMEOUT. */
  readonly report: Effect.Effect<ReadinessReport>
}

/**
 * What `/readyz` answers: the parts a front expects (the Discord bot: its gateway, the database,
 * start-up done), each with a check its owner registers once it exists. Until every part is
 * registered and passes, the process is alive but not ready.
 */
export class Readiness extends Context.Service<Readiness, ReadinessShape>()("loopcord/ops/Readiness") {
  static readonly layer = (expected: ReadonlyArray<string>): Layer.Layer<Readiness> =>
    Layer.effect(
      Readiness,
      Effect.gen(function*() {
        const checks = yield* Ref.make<ReadonlyMap<string, ReadinessCheck>>(new Map())
        const register = (name: string, check: ReadinessCheck) => Ref.update(checks, (all) => new Map(all).set(name, check))
        const report = Effect.gen(function*() {
          const registered = yield* Ref.get(checks)
          const names = [...new Set([...expected, ...registered.keys()])]
          const results = yield* Effect.forEach(names, (name) => {
            const check = registered.get(name)
            if (check === undefined) return Effect.succeed([name, "starting"] as const)
            return check.pipe(
              Effect.timeoutOption(CHECK_TIMEOUT),
              Effect.map(Option.match({ onNone: () => [name, "no answer within 2 s"] as const, onSome: () => [name, "ok"] as const })),
              Effect.catch((reason) => Effect.succeed([name, reason] as const)),
              Effect.catchDefect(() => Effect.succeed([name, "check failed"] as const))
            )
          }, { concurrency: "unbounded" })
          return { ready: results.every(([, state]) => state === "ok"), checks: Object.fromEntries(results) } satisfies ReadinessReport
        })
        return { register, report }
      })
    )
}
