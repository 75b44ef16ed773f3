import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import ipaddr from "ipaddr.js"
import { classifyAddress, parseAddress } from "../../src/fetch/AddressTable"

const hex = (value: number) => value.toString(16)

/** Every IPv6 form that carries an IPv4 address, built from its octets. */
const embeddings = ([a, b, c, d]: ReadonlyArray<number>): ReadonlyArray<readonly [string, string]> => {
  const high = ((a ?? 0) << 8) | (b ?? 0)
  const low = ((c ?? 0) << 8) | (d ?? 0)
  return [
    ["mapped", `::ffff:${hex(high)}:${hex(low)}`],
    ["compatible", `::${hex(high)}:${hex(low)}`],
    ["translated", `::ffff:0:${hex(high)}:${hex(low)}`],
    ["NAT64", `64:ff9b::${hex(high)}:${hex(low)}`],
    ["6to4", `2002:${hex(high)}:${hex(low)}::1`],
    ["Teredo server", `2001:0:${hex(high)}:${hex(low)}:0:0:0:0`],
    ["Teredo client", `2001:0:4136:e378:8000:63bf:${hex(~high & 0xffff)}:${hex(~low & 0xffff)}`]
  ]
}

const rank = (address: string): number => {
  const parsed = parseAddress(address)
  if (parsed === undefined) return 2
  const finding = classifyAddress(parsed)
  return finding === undefined ? 0 : finding.tier === "private" ? 1 : 2
}

describe("AddressTable", () => {
  it("an IPv4 address wrapped in any IPv6 form is judged at least as strictly as the address itself (property)", () => {
    const interesting = fc.oneof(
      fc.tuple(fc.constantFrom(0, 10, 127, 169, 100, 172, 192, 198, 203, 224, 240, 255), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
    )
    fc.assert(
      fc.property(interesting, (octets) => {
        const v4 = octets.join(".")
        const expected = rank(v4)
        return expected === 0 || embeddings(octets).every(([, v6]) => rank(v6) >= expected)
      }),
      { numRuns: 2_000 }
    )
  })

  it("the metadata floor survives every wrapping of 169.254.169.254 and 100.100.100.200", () => {
    for (const octets of [[169, 254, 169, 254], [100, 100, 100, 200], [169, 254, 0, 1]]) {
      for (const [form, v6] of embeddings(octets)) {
        assert.strictEqual(rank(v6), 2, `${form} ${v6}`)
      }
    }
  })

  it("tables agree with ipaddr.js wherever ipaddr.js says non-unicast, and go further", () => {
    for (const address of ["10.1.1.1", "127.0.0.1", "169.254.1.1", "192.168.1.1", "224.0.0.1", "::1", "fe80::1", "fc00::1", "ff02::1", "2001:db8::1"]) {
      assert.notStrictEqual(ipaddr.parse(address).range(), "unicast", address)
      assert.isAbove(rank(address), 0, address)
    }
    // Forms ipaddr.js calls "unicast" that the tables refuse (research A.6/A.8).
    for (const address of ["::7f00:1", "::a9fe:a9fe", "100:0:0:1::1", "4000::1", "fbff::1", "168.63.129.16"]) {
      assert.strictEqual(ipaddr.parse(address).range(), "unicast", address)
      assert.isAbove(rank(address), 0, address)
    }
  })
})
