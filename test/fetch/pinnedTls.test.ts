import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Layer } from "effect"
import { FetchConfig } from "../../src/config/FetchConfig"
import { AddressPolicy, DnsResolver } from "../../src/fetch/AddressPolicy"
import { SafeHttp } from "../../src/fetch/SafeHttp"
import { loopbackConnector } from "../support/fakeWeb/loopbackConnector"

/** A throwaway self-signed certificate for `pinned.test`, made for this run only (needs openssl, as CI has). */
const testCertificate = () => {
  if (spawnSync("openssl", ["version"], { stdio: "ignore" }).status !== 0) {
    throw new Error("openssl is needed to make the throwaway certificate of the TLS pinning test")
  }
  const dir = mkdtempSync(join(tmpdir(), "loopcord-tls-"))
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1",
    "-subj", "/CN=pinned.test", "-addext", "subjectAltName=DNS:pinned.test"
  ], { stdio: "ignore" })
  const pair = { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") }
  rmSync(dir, { recursive: true, force: true })
  return pair
}

const httpsServer = (pair: { readonly key: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: ReturnType<typeof createServer>; readonly port: number; readonly servernames: Array<string> }>((resume) => {
      const servernames: Array<string> = []
      const server = createServer(pair, (request, response) => {
        servernames.push(String((request.socket as TLSSocket).servername))
        response.end(`hello over TLS to ${request.headers.host}`)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, port: (server.address() as AddressInfo).port, servernames })))
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )

describe("pinned TLS", () => {
  it.effect("https connects to the pinned IP while SNI and certificate checks use the host name", () =>
    Effect.gen(function* () {
      const pair = testCertificate()
      const { port, servernames } = yield* httpsServer(pair)
      const connector = loopbackConnector({}, { ca: pair.cert })
      const layer = SafeHttp.Default.pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            FetchConfig.make({ production: false }),
            AddressPolicy.make({ allowPrivateNetwork: true }).pipe(
              Layer.provide(DnsResolver.fromTable({ "pinned.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] }))
            ),
            connector.layer
          )
        )
      )
      const http = yield* Effect.provide(SafeHttp, yield* Layer.build(layer))
      const ok = yield* http.request({ url: `https://pinned.test:${port}/` })
      assert.strictEqual(Buffer.from(ok.body).toString(), `hello over TLS to pinned.test:${port}`)
      assert.deepStrictEqual(servernames, ["pinned.test"])
      assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), ["127.0.0.1"])
      // Same pinned address, another name: the certificate does not cover it, so the handshake fails.
      const mismatch = yield* Effect.result(http.request({ url: `https://other.test:${port}/` }))
      assert.isTrue(Result.isFailure(mismatch))
      if (Result.isFailure(mismatch)) assert.match(mismatch.failure.message, /altnames|certificate/i)
    })
  )
})
