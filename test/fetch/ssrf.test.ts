/**
 * The SSRF suite. Where `unshare -n` works (CI runs as root), this file re-runs itself inside a
 * fresh network namespace that has only `lo`: even a broken policy cannot send a packet beyond
 * loopback. Everywhere, DNS is simulated and every socket goes through the loopback-only test
 * connector, which refuses any other address before connecting.
 */
import { spawnSync } from "node:child_process"
import { networkInterfaces } from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Layer } from "effect"
import { request as undiciRequest } from "undici"
import { AddressPolicy, DnsLookupError, DnsResolver, type DnsResolverShape, UrlPolicyError } from "../../src/fetch/AddressPolicy"
import { makePinnedDispatcher } from "../../src/fetch/pinnedDispatcher"
import { SafeHttp, SafeHttpError } from "../../src/fetch/SafeHttp"
import { loopbackConnector } from "../support/fakeWeb/loopbackConnector"
import { pageServer } from "../support/fakeWeb/pageServer"
import { fetchUrlKit, webStack, type WebKitOptions } from "../support/fakeWeb/webTestKit"
import { relaxedVerdict, ssrfCases, ssrfDns, type Verdict } from "./ssrfCases"

const NAMESPACE_ENV = "LOOPCORD_SSRF_NETNS"
const insideNamespace = process.env[NAMESPACE_ENV] === "1"
const namespaceWorks =
  !insideNamespace &&
  spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { stdio: "ignore", timeout: 10_000 }).status === 0

const verdictOf = (result: Result.Result<unknown, UrlPolicyError>): Verdict => {
  if (Result.isSuccess(result)) return "allow"
  const error = result.failure
  if (error.code !== "PRIVATE_NETWORK_BLOCKED") return error.code
  return error.alwaysBlocked === true ? "always" : "blocked"
}

const policyLayer = (allowPrivateNetwork: boolean) =>
  AddressPolicy.make({ allowPrivateNetwork }).pipe(Layer.provide(DnsResolver.fromTable(ssrfDns)))

const runRequest = (options: WebKitOptions, url: string, extra: { readonly method?: "GET" | "POST"; readonly body?: string } = {}) => {
  const stack = webStack(options)
  return {
    connector: stack.connector,
    result: Effect.flatMap(SafeHttp, (http) => Effect.result(http.request({ url, ...extra }))).pipe(Effect.provide(stack.layer))
  }
}

/** Answers a name differently on each lookup (DNS rebinding between lookups). */
const rebindingResolver = (host: string, answers: ReadonlyArray<string>) => {
  let calls = 0
  const resolver: DnsResolverShape = {
    lookup: (name) =>
      Effect.sync(() => calls++).pipe(
        Effect.flatMap((call) => {
          const answer = answers[Math.min(call, answers.length - 1)]
          return name === host && answer !== undefined
            ? Effect.succeed([{ address: answer, family: answer.includes(":") ? (6 as const) : (4 as const) }])
            : Effect.fail(new DnsLookupError({ host: name, reason: "ENOTFOUND" }))
        })
      )
  }
  return { resolver, calls: () => calls }
}

const PUBLIC = "93.184.216.34"

if (namespaceWorks) {
  describe("SSRF suite", () => {
    it("runs inside a loopback-only network namespace (unshare -n) and passes there", () => {
      const run = spawnSync(
        "unshare",
        ["-n", "sh", "-c", `ip link set lo up && exec "${process.execPath}" node_modules/vitest/vitest.mjs run test/fetch/ssrf.test.ts`],
        {
          cwd: process.cwd(),
          env: { ...process.env, [NAMESPACE_ENV]: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
          encoding: "utf8",
          timeout: 280_000,
          maxBuffer: 32 * 1024 * 1024
        }
      )
      const output = `${run.stdout}\n${run.stderr}`
      assert.strictEqual(run.status, 0, output.slice(-6000))
      const passed = Number(/Tests\s+(\d+) passed/.exec(output)?.[1] ?? "0")
      assert.isAtLeast(passed, 150, output.slice(-2000))
    }, 300_000)
  })
} else {
  describe("SSRF suite", () => {
    if (insideNamespace) {
      it("the namespace has only the loopback interface", () => {
        assert.deepStrictEqual(Object.keys(networkInterfaces()), ["lo"])
      })
    }

    describe("address policy table", () => {
      const production = policyLayer(false)
      const relaxed = policyLayer(true)
      for (const entry of ssrfCases) {
        for (const [mode, layer, expected] of [
          ["production", production, entry.production],
          ["dev/opt-in", relaxed, relaxedVerdict(entry)]
        ] as const) {
          it.effect(`[${entry.group}] ${mode}: ${JSON.stringify(entry.url)} → ${expected}`, () =>
            Effect.gen(function* () {
              const policy = yield* AddressPolicy
              const result = yield* Effect.result(policy.validate(entry.url))
              assert.strictEqual(verdictOf(result), expected, Result.isFailure(result) ? result.failure.message : "allowed")
              if (Result.isFailure(result) && (expected === "blocked" || expected === "always")) {
                if (entry.address !== undefined) assert.strictEqual(result.failure.address, entry.address)
                assert.include(result.failure.message, "FETCH_URL_ALLOW_PRIVATE_NETWORK=true")
                assert.include(result.failure.message, result.failure.host)
              }
            }).pipe(Effect.provide(layer))
          )
        }
      }
    })

    describe("no byte reaches a refused address", () => {
      it.effect("[90] loopback in every literal form never reaches a loopback server in production", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => response.end("secret"))
          const forms = ["127.0.0.1", "127.1", "0x7f.1", "2130706433", "017700000001", "0177.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "localhost", "loopback.test", "LOCALHOST."]
          for (const host of forms) {
            const { connector, result } = runRequest({ production: true, dns: ssrfDns }, `http://${host}:${server.port}/`)
            const outcome = yield* result
            assert.isTrue(Result.isFailure(outcome) && outcome.failure._tag === "UrlPolicyError", host)
            assert.deepStrictEqual(connector.attempts, [], host)
          }
          assert.strictEqual(server.connections(), 0)
        })
      )

      it.effect("[90] IPv6 loopback forms never reach a ::1 server in production", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => response.end("secret"), "::1")
          for (const host of ["[::1]", "[0:0:0:0:0:0:0:1]", "[0000::1]"]) {
            const { connector, result } = runRequest({ production: true }, `http://${host}:${server.port}/`)
            assert.isTrue(Result.isFailure(yield* result), host)
            assert.deepStrictEqual(connector.attempts, [])
          }
          assert.strictEqual(server.connections(), 0)
        })
      )

      it.effect("negative control: the same servers are reached when private networks are allowed", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => response.end("hello"))
          for (const host of ["127.1", "0x7f.1", "[::ffff:127.0.0.1]", "localhost"]) {
            const { result } = runRequest({ production: false, dns: ssrfDns }, `http://${host}:${server.port}/`)
            const outcome = yield* result
            assert.isTrue(Result.isSuccess(outcome) && Buffer.from(outcome.success.body).toString() === "hello", host)
          }
          assert.isAtLeast(server.connections(), 4)
        })
      )

      it.effect("mixed answers and names with a private answer open no connection", () =>
        Effect.gen(function* () {
          for (const host of ["mixed.test", "mixed-meta.test", "private.test", "mapped.test", "nowhere.invalid", "empty.test"]) {
            const { connector, result } = runRequest({ production: true, dns: ssrfDns, translate: { [PUBLIC]: "127.0.0.1" } }, `http://${host}/`)
            assert.isTrue(Result.isFailure(yield* result), host)
            assert.deepStrictEqual(connector.attempts, [], host)
          }
        })
      )

      it.effect("a pinned dispatcher refuses any host but its own", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => response.end("x"))
          const connector = loopbackConnector()
          const policy = yield* Effect.provide(AddressPolicy, policyLayer(true))
          const target = yield* policy.validate(`http://loopback.test:${server.port}/`)
          const dispatcher = makePinnedDispatcher(target, { connect: connector.connect })
          const other = yield* Effect.promise(() =>
            undiciRequest(`http://other.test:${server.port}/`, { dispatcher }).then(() => "connected", (error: unknown) => String(error))
          )
          assert.include(other, "refused a connection to other.test")
          assert.strictEqual(server.connections(), 0)
          yield* Effect.promise(() => dispatcher.destroy())
        })
      )
    })

    describe("redirects", () => {
      const redirecting = (location: (targetPort: number) => string) =>
        Effect.gen(function* () {
          const target = yield* pageServer((_request, response) => response.end("reached the target"))
          const start = yield* pageServer((_request, response) => {
            response.writeHead(302, { location: location(target.port) })
            response.end()
          })
          return { target, start }
        })

      const refusedRedirects: ReadonlyArray<readonly [string, (port: number) => string, string]> = [
        ["[99] to the AWS metadata address", () => "http://169.254.169.254/latest/meta-data/", "always"],
        ["[99] to the metadata address over https", () => "https://169.254.169.254/", "always"],
        ["to the AWS IPv6 metadata address", () => "http://[fd00:ec2::254]/", "always"],
        ["to GCP's metadata name", () => "http://metadata.google.internal/computeMetadata/v1/", "always"],
        ["to a decimal-encoded metadata address", () => "http://2852039166/", "always"],
        ["to loopback", (port) => `http://127.0.0.1:${port}/`, "blocked"],
        ["to hex loopback", (port) => `http://0x7f.1:${port}/`, "blocked"],
        ["to mapped loopback", (port) => `http://[::ffff:127.0.0.1]:${port}/`, "blocked"],
        ["to localhost by name", (port) => `http://localhost:${port}/`, "blocked"],
        ["to a private network", () => "http://10.0.0.1/admin", "blocked"],
        ["to a name with a private answer", () => "http://private.test/", "blocked"],
        ["to a backslash path that lands on loopback", () => "/\\127.0.0.1/", "blocked"],
        ["to ftp", () => "ftp://example.com/file", "INVALID_PROTOCOL"],
        ["to a URL with credentials", () => "http://user:pass@public.test/", "CREDENTIALS_IN_URL"],
        ["to an unresolvable name", () => "http://nowhere.invalid/", "DNS_RESOLUTION_FAILED"]
      ]
      for (const [name, location, expected] of refusedRedirects) {
        it.effect(`a public page redirecting ${name} is refused before the next request (production)`, () =>
          Effect.gen(function* () {
            const { start, target } = yield* redirecting(location)
            const { connector, result } = runRequest(
              { production: true, dns: { ...ssrfDns, "public.test": [PUBLIC] }, translate: { [PUBLIC]: "127.0.0.1" } },
              `http://public.test:${start.port}/`
            )
            const outcome = yield* result
            assert.isTrue(Result.isFailure(outcome))
            if (Result.isFailure(outcome)) {
              assert.instanceOf(outcome.failure, UrlPolicyError)
              assert.strictEqual(verdictOf(Result.fail(outcome.failure as UrlPolicyError)), expected)
            }
            assert.strictEqual(start.requests.length, 1)
            assert.strictEqual(target.connections(), 0)
            assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), [PUBLIC])
          })
        )
      }

      it.effect("in development a redirect to metadata is still refused, to loopback it is followed", () =>
        Effect.gen(function* () {
          const meta = yield* redirecting(() => "http://[::a9fe:a9fe]/")
          const toMeta = runRequest({ production: false }, `${meta.start.origin}/`)
          const refused = yield* toMeta.result
          assert.isTrue(Result.isFailure(refused) && refused.failure._tag === "UrlPolicyError" && refused.failure.alwaysBlocked === true)
          const local = yield* redirecting((port) => `http://127.0.0.1:${port}/`)
          const followed = yield* runRequest({ production: false }, `${local.start.origin}/`).result
          assert.isTrue(Result.isSuccess(followed) && followed.success.redirects === 1)
          assert.strictEqual(local.target.connections(), 1)
        })
      )

      it.effect("a redirect loop ends with Too many redirects after exactly 4 requests", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => {
            response.writeHead(301, { location: "/loop" })
            response.end()
          })
          const outcome = yield* runRequest({ production: false }, `${server.origin}/loop`).result
          assert.isTrue(Result.isFailure(outcome))
          if (Result.isFailure(outcome)) {
            assert.instanceOf(outcome.failure, SafeHttpError)
            assert.include(outcome.failure.message, "Too many redirects")
            assert.include(outcome.failure.message, "redirect loop")
          }
          assert.strictEqual(server.requests.length, 4)
        })
      )

      it.effect("[100] 3 hops succeed and 4 hops fail", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((request, response) => {
            const left = Number(request.url?.slice(1) ?? "0")
            if (left > 0) {
              response.writeHead(307, { location: `/${left - 1}` })
              response.end()
            } else response.end("done")
          })
          const three = yield* runRequest({ production: false }, `${server.origin}/3`).result
          assert.isTrue(Result.isSuccess(three) && three.success.redirects === 3)
          const four = yield* runRequest({ production: false }, `${server.origin}/4`).result
          assert.isTrue(Result.isFailure(four) && four.failure.message.includes("Too many redirects"))
        })
      )
    })

    describe("DNS", () => {
      it.effect("rebinding between lookups: the second hop's private answer is refused (production)", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((request, response) => {
            if (request.url === "/first") {
              response.writeHead(302, { location: "/second" })
              response.end()
            } else response.end("second hop reached")
          })
          const dns = rebindingResolver("rebind.test", [PUBLIC, "127.0.0.1"])
          const { connector, result } = runRequest(
            { production: true, resolver: dns.resolver, translate: { [PUBLIC]: "127.0.0.1" } },
            `http://rebind.test:${server.port}/first`
          )
          const outcome = yield* result
          assert.isTrue(Result.isFailure(outcome) && outcome.failure._tag === "UrlPolicyError" && outcome.failure.address === "127.0.0.1")
          assert.deepStrictEqual(server.requests.map((request) => request.url), ["/first"])
          assert.strictEqual(dns.calls(), 2)
          assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), [PUBLIC])
        })
      )

      it.effect("rebinding to metadata between lookups is refused even in development", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((request, response) => {
            response.writeHead(302, { location: "/again" })
            response.end(request.url)
          })
          const dns = rebindingResolver("rebind.test", ["127.0.0.1", "169.254.169.254"])
          const { connector, result } = runRequest({ production: false, resolver: dns.resolver }, `http://rebind.test:${server.port}/`)
          const outcome = yield* result
          assert.isTrue(Result.isFailure(outcome) && outcome.failure._tag === "UrlPolicyError" && outcome.failure.alwaysBlocked === true)
          assert.strictEqual(server.requests.length, 1)
          assert.deepStrictEqual(connector.refused, [])
        })
      )

      it.effect("[101] one lookup per hop: the connection uses the pinned answer, never a re-resolution", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((request, response) => response.end(String(request.headers.host)))
          // A second lookup would answer the metadata address: if anything re-resolved, it would show.
          const dns = rebindingResolver("pinned.test", ["127.0.0.1", "169.254.169.254"])
          const { connector, result } = runRequest({ production: false, resolver: dns.resolver }, `http://pinned.test:${server.port}/`)
          const outcome = yield* result
          assert.isTrue(Result.isSuccess(outcome) && Buffer.from(outcome.success.body).toString() === `pinned.test:${server.port}`)
          assert.strictEqual(dns.calls(), 1)
          assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), ["127.0.0.1"])
        })
      )

      it.effect("fetch_url: a rebinding answer between gate 1 and the GET is refused; the model never reads the address", () =>
        Effect.gen(function* () {
          const server = yield* pageServer((_request, response) => response.end("page"))
          const dns = rebindingResolver("flip.test", [PUBLIC, "10.1.2.3"])
          const kit = fetchUrlKit({ production: true, resolver: dns.resolver, translate: { [PUBLIC]: "127.0.0.1" } })
          const tool = yield* kit.tool
          // Gate 1 takes the first answer; the GET validates again and meets the second.
          const result = yield* kit.call(tool, { url: `http://flip.test:${server.port}/` })
          assert.isFalse(result.success)
          assert.strictEqual(result.error, "blocked: a private address")
          assert.notInclude(result.message ?? "", "10.1.2.3")
          assert.include(result.detail ?? "", "10.1.2.3")
          assert.deepStrictEqual(server.requests, [])
          assert.deepStrictEqual(kit.connector.refused, [])
        })
      )

      it.effect("[95] a lookup failure is DNS_RESOLUTION_FAILED in every mode and opens nothing", () =>
        Effect.gen(function* () {
          for (const production of [true, false]) {
            const { connector, result } = runRequest({ production, dns: {} }, "http://nowhere.invalid/")
            const outcome = yield* result
            assert.isTrue(Result.isFailure(outcome) && outcome.failure._tag === "UrlPolicyError" && outcome.failure.code === "DNS_RESOLUTION_FAILED")
            assert.deepStrictEqual(connector.attempts, [])
          }
        })
      )
    })
  })
}
