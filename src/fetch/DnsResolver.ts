import { lookup } from "node:dns/promises"
import { Context, Data, Effect, Layer } from "effect"

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

/**
 * Name resolution for the address policy. Swappable so tests simulate answers (private, mixed,
 * rebinding, none) without touching the real resolver.
 */
export class DnsResolver extends Context.Tag("loopcord/fetch/DnsResolver")<DnsResolver, DnsResolverShape>() {
  /** The operating system's resolver (getaddrinfo: /etc/hosts, then DNS), all addresses, verbatim order. */
  static readonly system: Layer.Layer<DnsResolver> = Layer.succeed(DnsResolver, {
    lookup: (host) =>
      Effect.tryPromise({
        try: () => lookup(host, { all: true, verbatim: true }),
        catch: (cause) =>
          new DnsLookupError({ host, reason: cause instanceof Error ? cause.message : String(cause) })
      }).pipe(
        Effect.map((answers) =>
          dedupe(answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 })))
        ),
        Effect.filterOrFail(
          (answers) => answers.length > 0,
          () => new DnsLookupError({ host, reason: "no addresses" })
        )
      )
  })

  /** A resolver answering from a fixed table (names not in it fail like NXDOMAIN). */
  static readonly fromTable = (
    table: Readonly<Record<string, ReadonlyArray<string>>>
  ): Layer.Layer<DnsResolver> =>
    Layer.succeed(DnsResolver, {
      lookup: (host) => {
        const answers = table[host]
        return answers === undefined || answers.length === 0
          ? Effect.fail(new DnsLookupError({ host, reason: answers === undefined ? "ENOTFOUND" : "no addresses" }))
          : Effect.succeed(dedupe(answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))))
      }
    })
}
