import ipaddr from "ipaddr.js"

/**
 * The address classifier every outbound URL check shares (docs/architecture.md, fetch_url and
 * safe_http; Guild MCP servers).
 *
 * Explicit tables, not `ipaddr.range()`: the library calls IPv4-compatible forms (`::7f00:1`),
 * the RFC 9780 dummy prefix and everything outside 2000::/3 (`4000::1`, `fbff::1`) "unicast".
 * IPv6 forms that carry an IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo)
 * are judged by the IPv4 inside, so the metadata floor holds whatever the wrapping.
 */

/** `always`: never fetched (metadata, link-local); `private`: fetched only where private networks are allowed. */
type AddressTier = "always" | "private"

interface AddressFinding {
  readonly tier: AddressTier
  /** Human reason, e.g. "loopback (RFC 1122)". */
  readonly reason: string
}

interface Row {
  readonly range: [ipaddr.IPv4 | ipaddr.IPv6, number]
  readonly tier: AddressTier
  readonly reason: string
}

const row = (cidr: string, tier: AddressTier, reason: string): Row => ({
  range: ipaddr.parseCIDR(cidr),
  tier,
  reason
})

const METADATA = "cloud instance-metadata or link-local address"

/** IANA IPv4 Special-Purpose Address Registry + multicast + reserved, and the metadata floor. */
const ipv4Table: ReadonlyArray<Row> = [
  row("169.254.0.0/16", "always", `${METADATA} (169.254.0.0/16)`),
  row("100.100.100.200/32", "always", `${METADATA} (Alibaba Cloud metadata)`),
  row("168.63.129.16/32", "always", `${METADATA} (Azure WireServer)`),
  row("192.0.0.192/32", "always", `${METADATA} (Oracle Cloud classic metadata)`),
  row("0.0.0.0/8", "private", "\"this network\" (RFC 791)"),
  row("10.0.0.0/8", "private", "private network (RFC 1918)"),
  row("100.64.0.0/10", "private", "shared address space / CGNAT (RFC 6598)"),
  row("127.0.0.0/8", "private", "loopback (RFC 1122)"),
  row("172.16.0.0/12", "private", "private network (RFC 1918)"),
  row("192.0.0.0/24", "private", "IETF protocol assignments (RFC 6890)"),
  row("192.0.2.0/24", "private", "documentation TEST-NET-1 (RFC 5737)"),
  row("192.31.196.0/24", "private", "AS112-v4 (RFC 7535)"),
  row("192.52.193.0/24", "private", "AMT (RFC 7450)"),
  row("192.88.99.0/24", "private", "deprecated 6to4 relay anycast (RFC 7526)"),
  row("192.168.0.0/16", "private", "private network (RFC 1918)"),
  row("192.175.48.0/24", "private", "AS112 direct delegation (RFC 7534)"),
  row("198.18.0.0/15", "private", "benchmarking (RFC 2544)"),
  row("198.51.100.0/24", "private", "documentation TEST-NET-2 (RFC 5737)"),
  row("203.0.113.0/24", "private", "documentation TEST-NET-3 (RFC 5737)"),
  row("224.0.0.0/4", "private", "multicast (RFC 5771)"),
  row("240.0.0.0/4", "private", "reserved / limited broadcast (RFC 1112, RFC 8190)")
]

// Teredo (2001::/32) sits inside this block but is judged by the IPv4 addresses it carries.
const IETF_PROTOCOL_ASSIGNMENTS = row("2001::/23", "private", "IETF protocol assignments (RFC 2928)")

/** IANA IPv6 Special-Purpose Address Registry + deprecated ranges, and the metadata floor. */
const ipv6Table: ReadonlyArray<Row> = [
  row("fe80::/10", "always", `${METADATA} (fe80::/10)`),
  row("fd00:ec2::254/128", "always", `${METADATA} (AWS IMDS IPv6)`),
  row("fd00:ec2::23/128", "always", `${METADATA} (AWS EKS Pod Identity IPv6)`),
  row("fd00:ec2::123/128", "always", `${METADATA} (AWS time sync IPv6)`),
  row("fd20:ce::254/128", "always", `${METADATA} (GCP metadata IPv6)`),
  row("fd00:c1::a9fe:a9fe/128", "always", `${METADATA} (Oracle Cloud metadata IPv6)`),
  row("fd00:42::42/128", "always", `${METADATA} (Scaleway metadata IPv6)`),
  row("::/128", "private", "unspecified address (RFC 4291)"),
  row("::1/128", "private", "loopback (RFC 4291)"),
  row("100::/64", "private", "discard-only (RFC 6666)"),
  row("100:0:0:1::/64", "private", "dummy IPv6 prefix (RFC 9780)"),
  row("64:ff9b:1::/48", "private", "local-use IPv4/IPv6 translation (RFC 8215)"),
  IETF_PROTOCOL_ASSIGNMENTS,
  row("2001:db8::/32", "private", "documentation (RFC 3849)"),
  row("2620:4f:8000::/48", "private", "AS112 direct delegation (RFC 7534)"),
  row("3fff::/20", "private", "documentation (RFC 9637)"),
  row("5f00::/16", "private", "SRv6 SIDs (RFC 9602)"),
  row("fc00::/7", "private", "unique local address (RFC 4193)"),
  row("fec0::/10", "private", "deprecated site-local (RFC 3879)"),
  row("ff00::/8", "private", "multicast (RFC 4291)")
]

const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3")
const TEREDO = ipaddr.parseCIDR("2001::/32")
const SIX_TO_FOUR = ipaddr.parseCIDR("2002::/16")
const NAT64 = ipaddr.parseCIDR("64:ff9b::/96")
const NAT64_LOCAL = ipaddr.parseCIDR("64:ff9b:1::/48")
const MAPPED = ipaddr.parseCIDR("::ffff:0:0/96")
const TRANSLATED = ipaddr.parseCIDR("::ffff:0:0:0/96")
const COMPATIBLE = ipaddr.parseCIDR("::/96")

const v4FromWords = (high: number, low: number): ipaddr.IPv4 =>
  new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff])

const word = (address: ipaddr.IPv6, index: number): number => address.parts[index] ?? 0

/** The IPv4 addresses an IPv6 address carries, with the name of the wrapping. */
const embeddedIPv4 = (
  address: ipaddr.IPv6
): ReadonlyArray<{ readonly via: string; readonly ipv4: ipaddr.IPv4 }> => {
  const low32 = () => v4FromWords(word(address, 6), word(address, 7))
  if (address.match(MAPPED)) return [{ via: "IPv4-mapped", ipv4: low32() }]
  if (address.match(TRANSLATED)) return [{ via: "IPv4-translated", ipv4: low32() }]
  if (address.match(NAT64)) return [{ via: "NAT64", ipv4: low32() }]
  if (address.match(NAT64_LOCAL)) {
    // RFC 6052 /48 layout: bits 48–63 and 72–87 around the u-octet; operators may also use /96.
    const a = word(address, 3)
    const b = word(address, 4)
    const c = word(address, 5)
    return [
      { via: "NAT64 local-use (/48 layout)", ipv4: v4FromWords(a, ((b & 0xff) << 8) | (c >> 8)) },
      { via: "NAT64 local-use (/96 layout)", ipv4: low32() }
    ]
  }
  if (address.match(SIX_TO_FOUR)) return [{ via: "6to4", ipv4: v4FromWords(word(address, 1), word(address, 2)) }]
  if (address.match(TEREDO)) {
    return [
      { via: "Teredo server", ipv4: v4FromWords(word(address, 2), word(address, 3)) },
      { via: "Teredo client", ipv4: v4FromWords(~word(address, 6) & 0xffff, ~word(address, 7) & 0xffff) }
    ]
  }
  // IPv4-compatible (deprecated): what WHATWG URL emits for `[::127.0.0.1]`. `::` and `::1` are themselves.
  if (address.match(COMPATIBLE) && (word(address, 6) !== 0 || word(address, 7) > 1)) {
    return [{ via: "IPv4-compatible", ipv4: low32() }]
  }
  return []
}

const worst = (findings: ReadonlyArray<AddressFinding>): AddressFinding | undefined => {
  const found = findings.find((finding) => finding.tier === "always") ?? findings[0]
  return found === undefined ? undefined : { tier: found.tier, reason: found.reason }
}

const classifyV4 = (address: ipaddr.IPv4): AddressFinding | undefined =>
  worst(ipv4Table.filter((entry) => address.match(entry.range)))

const classifyV6 = (address: ipaddr.IPv6): AddressFinding | undefined => {
  const teredo = address.match(TEREDO)
  const findings: Array<AddressFinding> = ipv6Table.filter(
    (entry) => address.match(entry.range) && !(teredo && entry === IETF_PROTOCOL_ASSIGNMENTS)
  )
  const embedded = embeddedIPv4(address)
  for (const { via, ipv4 } of embedded) {
    const inner = classifyV4(ipv4)
    if (inner !== undefined) findings.push({ tier: inner.tier, reason: `${via} ${ipv4.toString()}: ${inner.reason}` })
  }
  // A translation form (e.g. NAT64 64:ff9b::/96) carrying a public IPv4 is public.
  if (findings.length === 0 && embedded.length === 0 && !address.match(GLOBAL_UNICAST)) {
    return { tier: "private", reason: "reserved IPv6 space outside global unicast 2000::/3" }
  }
  return worst(findings)
}

/** A parsed address: IPv4-mapped IPv6 is unwrapped to IPv4, so it is judged as the IPv4 it carries. */
export const parseAddress = (text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (!ipaddr.isValid(bare)) return undefined
  const parsed = ipaddr.parse(bare)
  if (parsed instanceof ipaddr.IPv4) {
    // Only canonical dotted quads: resolver output and WHATWG URL hosts are always canonical.
    return ipaddr.IPv4.isValidFourPartDecimal(bare) ? parsed : undefined
  }
  return parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed
}

/** Why an address is special, or `undefined` for an ordinary public address. */
export const classifyAddress = (address: ipaddr.IPv4 | ipaddr.IPv6): AddressFinding | undefined =>
  address instanceof ipaddr.IPv4 ? classifyV4(address) : classifyV6(address)

/**
 * Host names of cloud metadata services, refused before any lookup: several resolve to an
 * ordinary private address (a cluster IP), so only the name keeps them behind the floor.
 */
export const metadataHostNames: ReadonlySet<string> = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "rancher-metadata",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local"
])
