import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { AddressPolicy, DnsResolver, type UrlPolicyError, type ValidatedTarget } from "../../src/fetch/AddressPolicy"

const validate = (
  url: string,
  options: { readonly allowPrivateNetwork: boolean; readonly dns?: Readonly<Record<string, ReadonlyArray<string>>> }
): Effect.Effect<Result.Result<ValidatedTarget, UrlPolicyError>> =>
  Effect.flatMap(AddressPolicy, (policy) => Effect.result(policy.validate(url))).pipe(
    Effect.provide(AddressPolicy.make(options).pipe(Layer.provide(DnsResolver.fromTable(options.dns ?? {}))))
  )

const production = { allowPrivateNetwork: false }
const development = { allowPrivateNetwork: true }

describe("AddressPolicy", () => {
  it.effect("[90] production without opt-in refuses 127.0.0.1 and names the opt-in", () =>
    Effect.gen(function* () {
      const result = yield* validate("http://127.0.0.1:11235/", production)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.code, "PRIVATE_NETWORK_BLOCKED")
        assert.include(result.failure.message, "FETCH_URL_ALLOW_PRIVATE_NETWORK=true")
        assert.include(result.failure.message, "127.0.0.1")
        assert.include(result.failure.message, "loopback")
      }
    })
  )

  it.effect("[91] production refuses [::ffff:127.0.0.1] and names 127.0.0.1", () =>
    Effect.gen(function* () {
      const result = yield* validate("http://[::ffff:127.0.0.1]/", production)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.code, "PRIVATE_NETWORK_BLOCKED")
        assert.strictEqual(result.failure.address, "127.0.0.1")
      }
    })
  )

  it.effect("[92] the metadata floor holds in development and with the opt-in", () =>
    Effect.gen(function* () {
      for (const url of [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://[fd20:ce::254]/",
        "http://100.100.100.200/",
        "http://[fe80::1]/"
      ]) {
        const result = yield* validate(url, development)
        assert.isTrue(Result.isFailure(result), url)
        if (Result.isFailure(result)) {
          assert.strictEqual(result.failure.code, "PRIVATE_NETWORK_BLOCKED")
          assert.include(result.failure.message, "cloud instance-metadata", url)
        }
      }
    })
  )

  it.effect("[93] the opt-in allows 192.168.1.10 and 100.64.0.1; production without it refuses 100.64.0.1", () =>
    Effect.gen(function* () {
      assert.isTrue(Result.isSuccess(yield* validate("http://192.168.1.10/", development)))
      assert.isTrue(Result.isSuccess(yield* validate("http://100.64.0.1/", development)))
      assert.isTrue(Result.isFailure(yield* validate("http://100.64.0.1/", production)))
      assert.isTrue(Result.isFailure(yield* validate("http://100.100.100.200/", development)))
    })
  )

  it.effect("[94] production allows https://93.184.216.34/", () =>
    Effect.gen(function* () {
      const result = yield* validate("https://93.184.216.34/", production)
      assert.isTrue(Result.isSuccess(result))
      if (Result.isSuccess(result)) {
        assert.deepStrictEqual(result.success.addresses, [{ address: "93.184.216.34", family: 4 }])
        assert.isTrue(result.success.isIpLiteral)
      }
    })
  )

  it.effect("[95] an unresolvable host is refused even where private networks are allowed", () =>
    Effect.gen(function* () {
      const result = yield* validate("http://nothing.invalid/", development)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) assert.strictEqual(result.failure.code, "DNS_RESOLUTION_FAILED")
    })
  )

  it.effect("[96] ftp:// is INVALID_PROTOCOL and 'not a url' is INVALID_FORMAT", () =>
    Effect.gen(function* () {
      const ftp = yield* validate("ftp://x", development)
      const junk = yield* validate("not a url", development)
      assert.isTrue(Result.isFailure(ftp) && ftp.failure.code === "INVALID_PROTOCOL")
      assert.isTrue(Result.isFailure(junk) && junk.failure.code === "INVALID_FORMAT")
    })
  )

  it.effect("names are judged by every resolved address and normalized", () =>
    Effect.gen(function* () {
      const dns = { "example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"], "mixed.test": ["93.184.216.34", "10.0.0.1"] }
      const ok = yield* validate("https://EXAMPLE.com.../path", { ...production, dns })
      assert.isTrue(Result.isSuccess(ok))
      if (Result.isSuccess(ok)) {
        assert.strictEqual(ok.success.host, "example.com")
        assert.strictEqual(ok.success.addresses.length, 2)
      }
      const mixed = yield* validate("https://mixed.test/", { ...production, dns })
      assert.isTrue(Result.isFailure(mixed) && mixed.failure.address === "10.0.0.1")
    })
  )

  it.effect("a hanging lookup is DNS_RESOLUTION_FAILED after 10 s on the Clock", () =>
    Effect.gen(function* () {
      const hanging = Layer.succeed(DnsResolver, { lookup: () => Effect.never })
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(AddressPolicy, (policy) => Effect.result(policy.validate("https://slow.test/"))).pipe(
          Effect.provide(AddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(hanging)))
        )
      )
      yield* TestClock.adjust(Duration.millis(9_999))
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust(Duration.millis(1))
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure.code === "DNS_RESOLUTION_FAILED")
      if (Result.isFailure(result)) assert.include(result.failure.message, "timed out after 10000 ms")
    })
  )
})
