import { isIP } from "node:net"
import { type Config, Context, Duration, Effect, Layer } from "effect"
import { allowPrivateNetworkSetting } from "../config/FetchConfig"
import { classifyAddress, metadataHostNames, parseAddress } from "./AddressTable"
import { DnsResolver, type ResolvedAddress } from "./DnsResolver"
import { UrlPolicyError } from "./UrlPolicyError"

export { UrlPolicyError } from "./UrlPolicyError"
export { DnsLookupError, DnsResolver, type DnsResolverShape } from "./DnsResolver"

/** A URL the policy accepted, with the only addresses a connection to it may use. */
export interface ValidatedTarget {
  readonly url: URL
  /** Lower-case, no trailing dots, no IPv6 brackets. */
  readonly host: string
  readonly isIpLiteral: boolean
  /** Every address was judged; connections are pinned to these (never re-resolved). Non-empty. */
  readonly addresses: ReadonlyArray<ResolvedAddress>
}

export interface AddressPolicyShape {
  /** Whether private, loopback and reserved addresses pass (the metadata floor never does). */
  readonly allowPrivateNetwork: boolean
  /**
   * The gate: parse (http/https only, no credentials), normalize the host, resolve it
   * (IP literal ⇒ itself; unresolvable ⇒ refused even when private networks are allowed) and
   * judge every address. Used for fetch_url and every redirect hop (and, as its own instance, guild MCP URLs).
   */
  readonly validate: (url: string | URL, options?: ValidateOptions) => Effect.Effect<ValidatedTarget, UrlPolicyError>
}

interface ValidateOptions {
  /** Allow private addresses for this URL (an operator-configured host); the metadata floor still holds. */
  readonly allowPrivateNetwork?: boolean
}

/** `Example.COM..` ⇒ `example.com`, `[::1]` ⇒ `::1`. */
export const normalizeHost = (hostname: string): string => {
  const lower = hostname.toLowerCase()
  const bare = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower
  return bare.replace(/\.+$/, "")
}

const parseUrl = (input: string | URL): Effect.Effect<URL, UrlPolicyError> =>
  Effect.suspend(() => {
    const text = typeof input === "string" ? input.trim() : input.href
    // URL.canParse avoids a throw for the common failure; WHATWG does IDNA and IPv4 canonicalization.
    if (!URL.canParse(text)) {
      return Effect.fail(new UrlPolicyError({ code: "INVALID_FORMAT", host: "", reason: `"${text.slice(0, 200)}" is not an absolute URL` }))
    }
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return Effect.fail(
        new UrlPolicyError({ code: "INVALID_PROTOCOL", host: normalizeHost(url.hostname), reason: `"${url.protocol}" is not http: or https:` })
      )
    }
    if (url.username !== "" || url.password !== "") {
      return Effect.fail(new UrlPolicyError({ code: "CREDENTIALS_IN_URL", host: normalizeHost(url.hostname), reason: "credentials in URL" }))
    }
    if (normalizeHost(url.hostname) === "") {
      return Effect.fail(new UrlPolicyError({ code: "INVALID_FORMAT", host: "", reason: "the URL has no host" }))
    }
    return Effect.succeed(url)
  })

/**
 * Judges resolved addresses: a private or reserved one passes only when private networks are
 * allowed, a metadata, link-local or unreadable one never does. The refusal names the first
 * refused address, one that is always refused before the others.
 */
const judgeAddresses = (
  host: string,
  addresses: ReadonlyArray<ResolvedAddress>,
  allowPrivateNetwork: boolean,
  optIn?: string
): UrlPolicyError | undefined => {
  const listed = addresses.map((entry) => entry.address)
  const refusals = addresses.flatMap((entry) => {
    const parsed = parseAddress(entry.address)
    if (parsed === undefined) {
      // Nothing can judge what this would connect to: refused everywhere.
      return [{ address: entry.address, tier: "always" as const, reason: "not a valid IP address" }]
    }
    const finding = classifyAddress(parsed)
    if (finding === undefined || (finding.tier === "private" && allowPrivateNetwork)) return []
    return [{ address: parsed.toString(), ...finding }]
  })
  // The metadata floor is named first: it is the refusal no setting can lift.
  const refusal = refusals.find((entry) => entry.tier === "always") ?? refusals[0]
  return refusal === undefined
    ? undefined
    : new UrlPolicyError({
        code: "PRIVATE_NETWORK_BLOCKED",
        host,
        address: refusal.address,
        reason: refusal.reason,
        addresses: listed,
        alwaysBlocked: refusal.tier === "always",
        ...(optIn === undefined ? {} : { optIn })
      })
}

/** IPv4-mapped answers are connected to as IPv4 (what they mean). */
const canonical = (entry: ResolvedAddress): ResolvedAddress => {
  const parsed = parseAddress(entry.address)
  if (parsed === undefined) return entry
  return { address: parsed.toString(), family: parsed.kind() === "ipv4" ? 4 : 6 }
}

/** A lookup that hangs (a dead resolver) is abandoned after this long, on the Clock. */
const DNS_LOOKUP_TIMEOUT = Duration.seconds(10)

interface AddressPolicyOptions {
  readonly allowPrivateNetwork: boolean
  readonly dnsTimeout?: Duration.Input
  /** The setting named in refusals as the one that allows private networks (default fetch_url's). */
  readonly optIn?: string
}

export const makeAddressPolicy = (options: AddressPolicyOptions) =>
  Effect.gen(function* () {
    const resolver = yield* DnsResolver
    const dnsTimeout = Duration.fromInputUnsafe(options.dnsTimeout ?? DNS_LOOKUP_TIMEOUT)
    const resolve = (host: string) =>
      isIP(host) !== 0
        ? Effect.succeed<ReadonlyArray<ResolvedAddress>>([{ address: host, family: isIP(host) === 6 ? 6 : 4 }])
        : resolver.lookup(host).pipe(
            Effect.mapError(
              (error) => new UrlPolicyError({ code: "DNS_RESOLUTION_FAILED", host, reason: error.reason })
            ),
            Effect.timeoutOrElse({
              duration: dnsTimeout,
              orElse: () =>
                Effect.fail(new UrlPolicyError({
                  code: "DNS_RESOLUTION_FAILED",
                  host,
                  reason: `the lookup timed out after ${Duration.toMillis(dnsTimeout)} ms`
                }))
            })
          )

    const validate = Effect.fn("AddressPolicy.validate")(function* (input: string | URL, validateOptions?: ValidateOptions) {
      const url = yield* parseUrl(input)
      const host = normalizeHost(url.hostname)
      if (metadataHostNames.has(host)) {
        return yield* new UrlPolicyError({
          code: "PRIVATE_NETWORK_BLOCKED",
          host,
          address: host,
          reason: "a cloud instance-metadata host name",
          alwaysBlocked: true,
          ...(options.optIn === undefined ? {} : { optIn: options.optIn })
        })
      }
      const addresses = (yield* resolve(host)).map(canonical)
      const allowPrivate = options.allowPrivateNetwork || validateOptions?.allowPrivateNetwork === true
      const refusal = judgeAddresses(host, addresses, allowPrivate, options.optIn)
      if (refusal !== undefined) return yield* refusal
      return { url, host, isIpLiteral: isIP(host) !== 0, addresses } satisfies ValidatedTarget
    })

    return AddressPolicy.of({ allowPrivateNetwork: options.allowPrivateNetwork, validate })
  })

/** fetch_url's outbound URL policy; guild MCP has its own (GuildMcpAddressPolicy: docs/architecture.md, Guild MCP servers). */
export class AddressPolicy extends Context.Service<AddressPolicy, AddressPolicyShape>()("loopcord/fetch/AddressPolicy") {
  /** From `RUN_ENV` and `FETCH_URL_ALLOW_PRIVATE_NETWORK`; needs a DnsResolver. */
  static readonly layer: Layer.Layer<AddressPolicy, Config.ConfigError, DnsResolver> = Layer.effect(
    AddressPolicy,
    Effect.flatMap(allowPrivateNetworkSetting, (allowPrivateNetwork) => makeAddressPolicy({ allowPrivateNetwork }))
  )
  /** `layer` with the system resolver. */
  static readonly layerSystem = AddressPolicy.layer.pipe(Layer.provide(DnsResolver.system))
  /** Explicit policy, for tests and embedding; needs a DnsResolver. */
  static readonly make = (options: AddressPolicyOptions): Layer.Layer<AddressPolicy, never, DnsResolver> =>
    Layer.effect(AddressPolicy, makeAddressPolicy(options))
}
