import { Resolver } from "node:dns/promises"
import { Context, Data, Effect, Layer, Semaphore } from "effect"
import { type HostsTable, makeHostsFileReader } from "./HostsFile"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export class DnsLookupError extends Data.TaggedError("DnsLookupError")<{
  readonly host: string
  readonly reason: string
}> {
  override get message(): string {
    return `DNS lookup of ${this.host} failed: ${this.reason}`
  }
}

export interface DnsResolverShape {
  /** Every address of `host`, in resolver order, deduplicated; an empty answer is a failure. */
  readonly lookup: (host: string) => Effect.Effect<ReadonlyArray<ResolvedAddress>, DnsLookupError>
}

const dedupe = (answers: ReadonlyArray<ResolvedAddress>): ReadonlyArray<ResolvedAddress> => {
  const seen = new Set<string>()
  return answers.filter((answer) => (seen.has(answer.address) ? false : (seen.add(answer.address), true)))
}

const familyOf = (address: string): 4 | 6 => (address.includes(":") ? 6 : 4)

/** A DNS query for A and AAAA records; rejects (with a `code`) when neither exists. */
export type DnsQuery = (host: string) => Promise<ReadonlyArray<ResolvedAddress>>

const errorCode = (cause: unknown): string =>
  cause instanceof Error && "code" in cause && typeof cause.code === "string" ? cause.code : String(cause)

/**
 * A and AAAA through c-ares (`dns.promises.Resolver`): it runs on the event loop, so a dead
 * or slow name server never occupies libuv's thread pool (which `dns.lookup`/getaddrinfo
 * does, stalling file I/O, SQLite and anything else queued there). IPv4 answers come first.
 */
export const caresQuery = (resolver: Resolver): DnsQuery => async (host) => {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)])
  const answers = [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : [])
  ].map((address): ResolvedAddress => ({ address, family: familyOf(address) }))
  if (answers.length > 0) return answers
  // ENODATA for one family says little; the other family's error is the more telling one.
  const failures = [v4, v6].flatMap((result) => (result.status === "rejected" ? [errorCode(result.reason)] : []))
  throw Object.assign(new Error("no addresses"), { code: failures.find((code) => code !== "ENODATA") ?? failures[0] ?? "ENODATA" })
}

/** RFC 6761 §6.3: `localhost` and `*.localhost` are loopback and never asked of DNS. */
const isLocalhostName = (host: string): boolean => host === "localhost" || host.endsWith(".localhost")
const LOOPBACK: ReadonlyArray<ResolvedAddress> = [
  { address: "127.0.0.1", family: 4 },
  { address: "::1", family: 6 }
]

interface SystemResolverOptions {
  /** DNS for names the hosts file does not list (default: c-ares over the system's name servers). */
  readonly query?: DnsQuery
  /** The hosts file (default: /etc/hosts, re-read every 30 s). */
  readonly hosts?: Effect.Effect<HostsTable>
  /** Lookups in flight at once; a lookup holds its slot until its query settles, even if abandoned. */
  readonly maxConcurrent?: number
}

/** c-ares settles every query by itself: 2.5 s per try, 2 tries per name server. */
const CARES_OPTIONS = { timeout: 2_500, tries: 2 } as const
const DNS_MAX_CONCURRENT = 32

/**
 * The resolver the address policy uses in production: `localhost` names, then the hosts file,
 * then DNS through c-ares, at most `maxConcurrent` queries at a time. The caller bounds the
 * wait (AddressPolicy's Clock deadline); an abandoned query keeps its slot until c-ares gives
 * up on it, so a flood of lookups of a black-holed domain cannot pile up without bound.
 */
export const makeSystemResolver = (options: SystemResolverOptions = {}) =>
  Effect.gen(function* () {
    const query = options.query ?? caresQuery(new Resolver(CARES_OPTIONS))
    const hosts = options.hosts ?? (yield* makeHostsFileReader())
    const slots = yield* Semaphore.make(options.maxConcurrent ?? DNS_MAX_CONCURRENT)

    const ask = (host: string) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          yield* restore(slots.take(1))
          const settled = query(host).then(
            (answers) => ({ ok: true as const, answers }),
            (cause: unknown) => ({ ok: false as const, reason: errorCode(cause) })
          )
          yield* Effect.forkDetach(Effect.ensuring(Effect.promise(() => settled), slots.release(1)))
          const outcome = yield* restore(Effect.promise(() => settled))
          return outcome.ok ? outcome.answers : yield* new DnsLookupError({ host, reason: outcome.reason })
        })
      )

    const lookup = (host: string) =>
      Effect.gen(function* () {
        if (isLocalhostName(host)) return LOOPBACK
        const listed = (yield* hosts).get(host)
        const answers =
          listed !== undefined && listed.length > 0
            ? listed.map((address): ResolvedAddress => ({ address, family: familyOf(address) }))
            : yield* ask(host)
        const unique = dedupe(answers)
        return unique.length > 0 ? unique : yield* new DnsLookupError({ host, reason: "no addresses" })
      })

    return DnsResolver.of({ lookup })
  })

/**
 * Name resolution for the address policy. Swappable so tests simulate answers (private, mixed,
 * rebinding, none) without touching the real resolver.
 */
export class DnsResolver extends Context.Service<DnsResolver, DnsResolverShape>()("loopcord/fetch/DnsResolver") {
  /** localhost, /etc/hosts, then DNS over c-ares (never the libuv thread pool), bounded concurrency. */
  static readonly system: Layer.Layer<DnsResolver> = Layer.effect(DnsResolver, makeSystemResolver())

  /** `system` with its parts replaced (tests: a fake query, a fixed hosts table, a small bound). */
  static readonly systemWith = (options: SystemResolverOptions): Layer.Layer<DnsResolver> =>
    Layer.effect(DnsResolver, makeSystemResolver(options))

  /** A resolver answering from a fixed table (names not in it fail like NXDOMAIN). */
  static readonly fromTable = (
    table: Readonly<Record<string, ReadonlyArray<string>>>
  ): Layer.Layer<DnsResolver> =>
    Layer.succeed(DnsResolver, {
      lookup: (host) => {
        const answers = table[host]
        return answers === undefined || answers.length === 0
          ? Effect.fail(new DnsLookupError({ host, reason: answers === undefined ? "ENOTFOUND" : "no addresses" }))
          : Effect.succeed(dedupe(answers.map((address) => ({ address, family: familyOf(address) }))))
      }
    })
}
