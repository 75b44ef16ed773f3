/**
 * The SSRF case table: (url, simulated DNS) → expected verdict in production (no opt-in) and in
 * development / production with the opt-in. Sources: research A.3/A.6/A.7/A.8 (WHATWG
 * canonicalization, IANA special-purpose registries, metadata floor, parser-confusion strings).
 *
 * `blocked`: PRIVATE_NETWORK_BLOCKED unless private networks are allowed; `always`: the
 * metadata / link-local floor, blocked everywhere.
 */
export type Verdict =
  | "allow"
  | "blocked"
  | "always"
  | "INVALID_FORMAT"
  | "INVALID_PROTOCOL"
  | "CREDENTIALS_IN_URL"
  | "DNS_RESOLUTION_FAILED"

export interface SsrfCase {
  readonly group: string
  readonly url: string
  readonly production: Verdict
  /** Development, or production with FETCH_URL_ALLOW_PRIVATE_NETWORK; default derived. */
  readonly relaxed?: Verdict
  /** The address the refusal must name. */
  readonly address?: string
}

/** Simulated DNS for every name in the table (anything else: NXDOMAIN). */
export const ssrfDns: Readonly<Record<string, ReadonlyArray<string>>> = {
  "example.com": ["93.184.216.34"],
  "public.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  localhost: ["127.0.0.1", "::1"],
  "private.test": ["10.0.0.5"],
  "loopback.test": ["127.0.0.1"],
  "mixed.test": ["93.184.216.34", "10.0.0.1"],
  "mixed-meta.test": ["93.184.216.34", "169.254.169.254"],
  "mixed-v6.test": ["2606:4700::6810:84e5", "fd12:3456::1"],
  "v6only.test": ["2606:4700::6810:84e5"],
  "v6private.test": ["fd12:3456::1"],
  "mapped.test": ["::ffff:127.0.0.1"],
  "mapped-meta.test": ["::ffff:169.254.169.254"],
  "cgnat.test": ["100.64.1.1"],
  "alibaba.test": ["100.100.100.200"],
  "nat64-meta.test": ["64:ff9b::a9fe:a9fe"],
  "garbage.test": ["not-an-address"],
  "xn--exmple-cua.test": ["93.184.216.35"],
  "evil.com": ["93.184.216.36"],
  path: ["10.9.9.9"],
  "empty.test": []
}

const scheme: ReadonlyArray<SsrfCase> = [
  { group: "scheme", url: "ftp://example.com/file", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "file:///etc/passwd", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "gopher://127.0.0.1:70/_stats", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "dict://127.0.0.1:11211/stats", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "ldap://127.0.0.1/", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "javascript:alert(1)", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "data:text/html,<h1>x</h1>", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "ws://example.com/socket", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "wss://example.com/socket", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "localhost:+11211aaa", production: "INVALID_PROTOCOL" },
  { group: "scheme", url: "not a url", production: "INVALID_FORMAT" },
  { group: "scheme", url: "", production: "INVALID_FORMAT" },
  { group: "scheme", url: "//example.com/relative", production: "INVALID_FORMAT" },
  { group: "scheme", url: "http://", production: "INVALID_FORMAT" },
  { group: "scheme", url: "http://[::1", production: "INVALID_FORMAT" },
  { group: "scheme", url: "http://exa mple.com/", production: "INVALID_FORMAT" },
  { group: "scheme", url: "http://%00/", production: "INVALID_FORMAT" },
  { group: "scheme", url: "HTTPS://EXAMPLE.COM/", production: "allow" },
  { group: "scheme", url: "http:///path", production: "blocked", address: "10.9.9.9" }
]

const loopback = (url: string): SsrfCase => ({ group: "ipv4 encodings", url, production: "blocked", address: "127.0.0.1" })

const ipv4Encodings: ReadonlyArray<SsrfCase> = [
  loopback("http://127.0.0.1/"),
  loopback("http://127.1/"),
  loopback("http://127.0.1/"),
  loopback("http://0177.0.0.1/"),
  loopback("http://0x7f.0.0.1/"),
  loopback("http://0x7f.1/"),
  loopback("http://2130706433/"),
  loopback("http://017700000001/"),
  loopback("http://0x7f000001/"),
  loopback("http://127.000.000.001/"),
  loopback("http://%31%32%37.0.0.1/"),
  loopback("http://１２７．０．０．１/"),
  loopback("http://127。0。0。1/"),
  loopback("http://①②⑦.⓪.⓪.①/"),
  loopback("http://127.0.0.1./"),
  { group: "ipv4 encodings", url: "http://127.255.255.254/", production: "blocked", address: "127.255.255.254" },
  { group: "ipv4 encodings", url: "http://0/", production: "blocked", address: "0.0.0.0" },
  { group: "ipv4 encodings", url: "http://0.0.0.0/", production: "blocked", address: "0.0.0.0" },
  { group: "ipv4 encodings", url: "http://0x0/", production: "blocked", address: "0.0.0.0" },
  { group: "ipv4 encodings", url: "http://012.1.2.3/", production: "blocked", address: "10.1.2.3" },
  { group: "ipv4 encodings", url: "http://3232235521/", production: "blocked", address: "192.168.0.1" },
  { group: "ipv4 encodings", url: "http://0xc0a80001/", production: "blocked", address: "192.168.0.1" },
  { group: "ipv4 encodings", url: "http://0xa9fea9fe/", production: "always", address: "169.254.169.254" },
  { group: "ipv4 encodings", url: "http://2852039166/", production: "always", address: "169.254.169.254" },
  { group: "ipv4 encodings", url: "http://0251.0376.0251.0376/", production: "always", address: "169.254.169.254" },
  { group: "ipv4 encodings", url: "http://425.510.425.510/", production: "INVALID_FORMAT" },
  { group: "ipv4 encodings", url: "http://7147006462/", production: "INVALID_FORMAT" },
  { group: "ipv4 encodings", url: "http://0x41414141A9FEA9FE/", production: "INVALID_FORMAT" },
  { group: "ipv4 encodings", url: "http://1.2.3.4.5/", production: "INVALID_FORMAT" },
  { group: "ipv4 encodings", url: "http://256.1.1.1/", production: "INVALID_FORMAT" },
  { group: "ipv4 encodings", url: "http://0o177.0.0.1/", production: "INVALID_FORMAT" }
]

const v4 = (address: string, production: Verdict, group = "ipv4 ranges"): SsrfCase => ({
  group,
  url: `http://${address}/`,
  production,
  ...(production === "allow" ? {} : { address })
})

const ipv4Ranges: ReadonlyArray<SsrfCase> = [
  v4("10.0.0.1", "blocked"),
  v4("10.255.255.255", "blocked"),
  v4("172.16.0.1", "blocked"),
  v4("172.31.255.255", "blocked"),
  v4("192.168.0.1", "blocked"),
  v4("192.168.255.255", "blocked"),
  v4("100.64.0.1", "blocked"),
  v4("100.127.255.255", "blocked"),
  v4("192.0.0.8", "blocked"),
  v4("192.0.0.170", "blocked"),
  v4("192.0.2.1", "blocked"),
  v4("192.31.196.1", "blocked"),
  v4("192.52.193.1", "blocked"),
  v4("192.88.99.1", "blocked"),
  v4("192.175.48.1", "blocked"),
  v4("198.18.0.1", "blocked"),
  v4("198.19.255.255", "blocked"),
  v4("198.51.100.1", "blocked"),
  v4("203.0.113.1", "blocked"),
  v4("224.0.0.1", "blocked"),
  v4("239.255.255.250", "blocked"),
  v4("240.0.0.1", "blocked"),
  v4("255.255.255.255", "blocked"),
  v4("169.254.169.254", "always", "metadata floor"),
  v4("169.254.170.2", "always", "metadata floor"),
  v4("169.254.0.1", "always", "metadata floor"),
  v4("169.254.255.255", "always", "metadata floor"),
  v4("100.100.100.200", "always", "metadata floor"),
  v4("168.63.129.16", "always", "metadata floor"),
  v4("192.0.0.192", "always", "metadata floor")
]

const ipv4Edges: ReadonlyArray<SsrfCase> = [
  "9.255.255.255",
  "11.0.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "126.255.255.255",
  "128.0.0.0",
  "169.253.255.255",
  "169.255.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "192.167.255.255",
  "192.169.0.0",
  "192.0.1.255",
  "192.0.3.0",
  "198.17.255.255",
  "198.20.0.0",
  "198.51.99.255",
  "198.51.101.0",
  "203.0.112.255",
  "203.0.114.0",
  "223.255.255.255",
  "1.1.1.1",
  "8.8.8.8",
  "93.184.216.34",
  "168.63.129.17"
].map((address) => v4(address, "allow", "ipv4 public edges"))

const v6 = (literal: string, production: Verdict, address?: string, group = "ipv6"): SsrfCase => ({
  group,
  url: `http://[${literal}]/`,
  production,
  ...(address === undefined ? {} : { address })
})

const ipv6: ReadonlyArray<SsrfCase> = [
  v6("::1", "blocked", "::1"),
  v6("0:0:0:0:0:0:0:1", "blocked", "::1"),
  v6("0000::1", "blocked", "::1"),
  v6("::", "blocked", "::"),
  v6("fc00::1", "blocked", "fc00::1"),
  v6("fd00::1", "blocked", "fd00::1"),
  v6("fdff:ffff::1", "blocked"),
  v6("fec0::1", "blocked"),
  v6("ff02::1", "blocked"),
  v6("ff00::", "blocked"),
  v6("2001:db8::1", "blocked"),
  v6("3fff::1", "blocked"),
  v6("100::1", "blocked"),
  v6("100:0:0:1::1", "blocked"),
  v6("4000::1", "blocked"),
  v6("fbff::1", "blocked"),
  v6("5f00::1", "blocked"),
  v6("1fff:ffff::1", "blocked"),
  v6("2001:2::1", "blocked"),
  v6("2001:10::1", "blocked"),
  v6("2001:1::1", "blocked"),
  v6("2620:4f:8000::1", "blocked"),
  v6("64:ff9b:1::1", "blocked"),
  v6("fe80::1", "always"),
  v6("fe80::a9fe:a9fe", "always"),
  v6("febf:ffff::1", "always"),
  v6("fd00:ec2::254", "always"),
  v6("fd00:ec2::23", "always"),
  v6("fd20:ce::254", "always"),
  v6("fd00:c1::a9fe:a9fe", "always"),
  v6("2606:4700:4700::1111", "allow", undefined, "ipv6 public"),
  v6("2001:4860:4860::8888", "allow", undefined, "ipv6 public"),
  v6("2a00:1450:4001:80b::200e", "allow", undefined, "ipv6 public"),
  v6("2001:200::1", "allow", undefined, "ipv6 public"),
  v6("3fff:1000::1", "allow", undefined, "ipv6 public"),
  v6("2620:4f:8001::1", "allow", undefined, "ipv6 public")
]

const embedded: ReadonlyArray<SsrfCase> = [
  v6("::ffff:127.0.0.1", "blocked", "127.0.0.1", "embedded ipv4"),
  v6("::ffff:7f00:1", "blocked", "127.0.0.1", "embedded ipv4"),
  v6("0:0:0:0:0:ffff:127.0.0.1", "blocked", "127.0.0.1", "embedded ipv4"),
  v6("::FFFF:127.0.0.1", "blocked", "127.0.0.1", "embedded ipv4"),
  v6("::ffff:10.0.0.1", "blocked", "10.0.0.1", "embedded ipv4"),
  v6("::ffff:169.254.169.254", "always", "169.254.169.254", "embedded ipv4"),
  v6("::ffff:a9fe:a9fe", "always", "169.254.169.254", "embedded ipv4"),
  v6("::ffff:100.100.100.200", "always", "100.100.100.200", "embedded ipv4"),
  v6("::ffff:93.184.216.34", "allow", undefined, "embedded ipv4"),
  v6("::127.0.0.1", "blocked", "::7f00:1", "embedded ipv4"),
  v6("::7f00:1", "blocked", "::7f00:1", "embedded ipv4"),
  v6("::a9fe:a9fe", "always", "::a9fe:a9fe", "embedded ipv4"),
  v6("::2", "blocked", "::2", "embedded ipv4"),
  v6("::ffff:0:7f00:1", "blocked", "::ffff:0:7f00:1", "embedded ipv4"),
  v6("::ffff:0:a9fe:a9fe", "always", undefined, "embedded ipv4"),
  v6("64:ff9b::127.0.0.1", "blocked", "64:ff9b::7f00:1", "embedded ipv4"),
  v6("64:ff9b::a9fe:a9fe", "always", undefined, "embedded ipv4"),
  v6("64:ff9b::10.1.1.1", "blocked", undefined, "embedded ipv4"),
  v6("64:ff9b::8.8.8.8", "allow", undefined, "embedded ipv4"),
  v6("64:ff9b:1:a9fe:a9:fe00::", "always", undefined, "embedded ipv4"),
  v6("2002:7f00:1::", "blocked", undefined, "embedded ipv4"),
  v6("2002:a9fe:a9fe::1", "always", undefined, "embedded ipv4"),
  v6("2002:c0a8:101::1", "blocked", undefined, "embedded ipv4"),
  v6("2002:808:808::1", "allow", undefined, "embedded ipv4"),
  v6("2001:0:7f00:1::", "blocked", undefined, "embedded ipv4"),
  v6("2001:0:4136:e378:8000:63bf:3fff:fdd2", "blocked", undefined, "embedded ipv4"),
  v6("2001:0:a9fe:a9fe::", "always", undefined, "embedded ipv4"),
  v6("2001:0:4136:e378:8000:63bf:56ff:4321", "allow", undefined, "embedded ipv4")
]

const credentials: ReadonlyArray<SsrfCase> = [
  { group: "credentials", url: "http://user:pass@example.com/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "http://user@example.com/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "http://:pass@example.com/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "https://user:@example.com/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "http://u:p@127.0.0.1/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "http://example.com@127.0.0.1/", production: "CREDENTIALS_IN_URL" },
  { group: "credentials", url: "http://%75ser:%70w@example.com/", production: "CREDENTIALS_IN_URL" },
  { group: "parser confusion", url: "http://127.1.1.1:80\\@127.2.2.2:80/", production: "blocked", address: "127.1.1.1" },
  { group: "parser confusion", url: "http://127.0.0.1#@example.com/", production: "blocked", address: "127.0.0.1" },
  { group: "parser confusion", url: "http://example.com#@127.0.0.1/", production: "allow" },
  { group: "parser confusion", url: "http://evil.com\\@example.com/", production: "allow" },
  { group: "parser confusion", url: "http://example.com?@127.0.0.1/", production: "allow" },
  { group: "parser confusion", url: "http://[fe80::1%25eth0]/", production: "INVALID_FORMAT" },
  { group: "parser confusion", url: "http://[::ffff:127.1]/", production: "INVALID_FORMAT" }
]

const names: ReadonlyArray<SsrfCase> = [
  { group: "dns", url: "http://localhost/", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://LOCALHOST.../", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://local%68ost/", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://private.test/", production: "blocked", address: "10.0.0.5" },
  { group: "dns", url: "http://loopback.test:8080/admin", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://mixed.test/", production: "blocked", address: "10.0.0.1" },
  { group: "dns", url: "http://mixed-meta.test/", production: "always", address: "169.254.169.254" },
  { group: "dns", url: "http://mixed-v6.test/", production: "blocked", address: "fd12:3456::1" },
  { group: "dns", url: "http://v6only.test/", production: "allow" },
  { group: "dns", url: "http://v6private.test/", production: "blocked", address: "fd12:3456::1" },
  { group: "dns", url: "http://mapped.test/", production: "blocked", address: "127.0.0.1" },
  { group: "dns", url: "http://mapped-meta.test/", production: "always", address: "169.254.169.254" },
  { group: "dns", url: "http://cgnat.test/", production: "blocked", address: "100.64.1.1" },
  { group: "dns", url: "http://alibaba.test/", production: "always", address: "100.100.100.200" },
  { group: "dns", url: "http://nat64-meta.test/", production: "always" },
  { group: "dns", url: "http://garbage.test/", production: "always", address: "not-an-address" },
  { group: "dns", url: "http://public.test/", production: "allow" },
  { group: "dns", url: "http://exämple.test/", production: "allow" },
  { group: "dns", url: "http://nowhere.invalid/", production: "DNS_RESOLUTION_FAILED" },
  { group: "dns", url: "http://empty.test/", production: "DNS_RESOLUTION_FAILED" },
  { group: "dns", url: "http://metadata.google.internal/computeMetadata/v1/", production: "always" },
  { group: "dns", url: "http://Metadata.Google.Internal./", production: "always" },
  { group: "dns", url: "http://metadata/", production: "always" },
  { group: "dns", url: "http://instance-data.ec2.internal/", production: "always" },
  { group: "dns", url: "http://kubernetes.default.svc.cluster.local/", production: "always" }
]

export const ssrfCases: ReadonlyArray<SsrfCase> = [
  ...scheme,
  ...ipv4Encodings,
  ...ipv4Ranges,
  ...ipv4Edges,
  ...ipv6,
  ...embedded,
  ...credentials,
  ...names
]

export const relaxedVerdict = (entry: SsrfCase): Verdict =>
  entry.relaxed ?? (entry.production === "blocked" ? "allow" : entry.production)
