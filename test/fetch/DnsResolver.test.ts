import { pbkdf2 } from "node:crypto"
import { Resolver } from "node:dns/promises"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Result, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { AddressPolicy } from "../../src/fetch/AddressPolicy"
import { caresQuery, DnsResolver, type DnsQuery, makeSystemResolver, type ResolvedAddress } from "../../src/fetch/DnsResolver"
import { parseHostsFile } from "../../src/fetch/HostsFile"
import { pendingSleeps } from "../support/testClockSleeps"
import { startFakeDnsServer } from "./fakeDnsServer"

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 })

/** A DNS query the test answers by hand: every call is recorded with its settle functions. */
const manualQuery = () => {
  const calls: Array<{ readonly host: string; readonly answer: (addresses: ReadonlyArray<string>) => void }> = []
  const query: DnsQuery = (host) =>
    new Promise((resolve) => {
      calls.push({ host, answer: (addresses) => resolve(addresses.map(v4)) })
    })
  return { calls, query }
}

/** Waits in real time (promises settle outside the TestClock) until `condition` holds, 5 s at most. */
const until = (condition: () => boolean, what: string) =>
  Effect.promise(async () => {
    const started = performance.now()
    while (!condition()) {
      if (performance.now() - started > 5_000) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

describe("DnsResolver.system (issue 12 item 10): c-ares, hosts file, localhost, bounded", () => {
  it("parseHostsFile: address then names, comments, any case, several addresses per name", () => {
    const table = parseHostsFile([
      "127.0.0.1 localhost",
      "# 10.0.0.1 commented.example",
      "10.0.0.5   Intranet.Example intranet   # trailing comment",
      "::1 ip6-localhost",
      "fe80::1%eth0 link.example",
      "10.0.0.6 intranet.example.",
      "not-an-ip bogus.example",
      ""
    ].join("\n"))
    assert.deepStrictEqual(table.get("intranet.example"), ["10.0.0.5", "10.0.0.6"])
    assert.deepStrictEqual(table.get("intranet"), ["10.0.0.5"])
    assert.deepStrictEqual(table.get("ip6-localhost"), ["::1"])
    assert.deepStrictEqual(table.get("link.example"), ["fe80::1"])
    assert.isUndefined(table.get("commented.example"))
    assert.isUndefined(table.get("bogus.example"))
  })

  it.effect("localhost names are loopback and the hosts file is read before DNS; only other names are queried", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const resolver = yield* makeSystemResolver({
        query: (host) => {
          asked.push(host)
          return host === "twice.example"
            ? Promise.resolve([v4("93.184.215.14"), v4("93.184.215.14"), { address: "2606:2800::1", family: 6 }])
            : Promise.reject(Object.assign(new Error("queryA ENOTFOUND"), { code: "ENOTFOUND" }))
        },
        hosts: Effect.succeed(parseHostsFile("10.0.0.5 intranet.example\n127.0.0.1 localhost"))
      })
      assert.deepStrictEqual((yield* resolver.lookup("localhost")).map((entry) => entry.address), ["127.0.0.1", "::1"])
      assert.deepStrictEqual((yield* resolver.lookup("api.localhost")).map((entry) => entry.address), ["127.0.0.1", "::1"])
      assert.deepStrictEqual(yield* resolver.lookup("intranet.example"), [v4("10.0.0.5")])
      assert.deepStrictEqual(yield* resolver.lookup("twice.example"), [v4("93.184.215.14"), { address: "2606:2800::1", family: 6 }])
      const missing = yield* Effect.result(resolver.lookup("missing.example"))
      assert.isTrue(Result.isFailure(missing) && missing.failure.reason === "ENOTFOUND")
      assert.deepStrictEqual(asked, ["twice.example", "missing.example"], "localhost and hosts-file names never reach DNS")
    })
  )

  it.effect("a lookup that never answers fails at the policy's 10 s deadline (TestClock); slots stay taken until the query settles", () =>
    Effect.gen(function* () {
      const manual = manualQuery()
      const resolver = Layer.effect(DnsResolver, makeSystemResolver({ query: manual.query, hosts: Effect.succeed(new Map()), maxConcurrent: 2 }))
      const policy = yield* Effect.provide(AddressPolicy, AddressPolicy.make({ allowPrivateNetwork: false }).pipe(Layer.provide(resolver)))
      const validate = (host: string) => Effect.forkChild(Effect.result(policy.validate(`http://${host}/`)))
      const first = yield* validate("a.example")
      const second = yield* validate("b.example")
      const third = yield* validate("c.example")
      yield* until(() => manual.calls.length === 2, "two queries in flight")
      const now = yield* Clock.currentTimeMillis
      const due = yield* pendingSleeps
      assert.strictEqual(due.filter((at) => at === now + 10_000).length, 3, "all three lookups wait on the Clock")
      yield* TestClock.adjust(Duration.millis(9_999))
      assert.isUndefined(first.pollUnsafe())
      yield* TestClock.adjust(Duration.millis(1))
      for (const fiber of [first, second, third]) {
        const outcome = yield* Fiber.join(fiber)
        assert.isTrue(Result.isFailure(outcome) && outcome.failure.code === "DNS_RESOLUTION_FAILED" && outcome.failure.reason.includes("timed out after 10000 ms"))
      }
      assert.strictEqual(manual.calls.length, 2, "the third lookup never got a slot: at most 2 queries at once")
      // Abandoned queries still hold their slots: a new lookup waits until one of them settles.
      const fourth = yield* validate("d.example")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.strictEqual(manual.calls.length, 2)
      manual.calls[0]?.answer(["93.184.215.14"])
      yield* until(() => manual.calls.length === 3, "the freed slot to be taken")
      assert.strictEqual(manual.calls[2]?.host, "d.example")
      manual.calls[2]?.answer(["93.184.215.15"])
      const answered = yield* Fiber.join(fourth)
      assert.isTrue(Result.isSuccess(answered) && answered.success.addresses[0]?.address === "93.184.215.15")
    })
  )

  it.live("c-ares against a loopback name server: A and AAAA, NXDOMAIN, and a silent server that leaves the thread pool free", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startFakeDnsServer({
            answers: { "dual.example": ["93.184.215.14", "2606:2800:220:1::1"], "four.example": ["93.184.215.20"] },
            silent: Array.from({ length: 8 }, (_, index) => `blackhole${index}.example`)
          })
        ),
        (started) => Effect.promise(() => started.close())
      )
      const cares = new Resolver({ timeout: 20_000, tries: 1 })
      cares.setServers([server.address])
      yield* Effect.addFinalizer(() => Effect.sync(() => cares.cancel()))
      const resolver = yield* makeSystemResolver({ query: caresQuery(cares), hosts: Effect.succeed(new Map()) })

      assert.deepStrictEqual(yield* resolver.lookup("dual.example"), [
        { address: "93.184.215.14", family: 4 },
        { address: "2606:2800:220:1::1", family: 6 }
      ])
      assert.deepStrictEqual(yield* resolver.lookup("four.example"), [{ address: "93.184.215.20", family: 4 }])
      const missing = yield* Effect.result(resolver.lookup("missing.example"))
      assert.isTrue(Result.isFailure(missing) && missing.failure.reason === "ENOTFOUND")

      // Eight lookups hang on a name server that never answers (getaddrinfo would pin all four
      // libuv threads); meanwhile thread-pool work runs at once.
      const hanging = yield* Effect.forEach(Array.from({ length: 8 }, (_, index) => `blackhole${index}.example`), (host) =>
        Effect.forkChild(resolver.lookup(host))
      )
      yield* until(() => server.questions.filter((question) => question.startsWith("blackhole")).length >= 16, "every silent question")
      const pooled = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: 8 }, () => new Promise<void>((resolve, reject) => pbkdf2("pw", "salt", 1_000, 32, "sha256", (error) => (error === null ? resolve() : reject(error))))))
      )
      assert.strictEqual(pooled.length, 8)
      for (const fiber of hanging) assert.isUndefined(fiber.pollUnsafe(), "the silent lookups are still pending")
      cares.cancel()
      for (const fiber of hanging) {
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit), "cancelled lookups fail")
      }
    })
  )
})
