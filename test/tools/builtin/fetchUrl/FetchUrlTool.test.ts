import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import { resolveEngineOrder } from "../../../../src/tools/builtin/fetchUrl/engineOrder"
import { pageServer } from "../../../support/fakeWeb/pageServer"
import { fetchUrlKit } from "../../../support/fakeWeb/webTestKit"

const MIB = 1024 * 1024

interface Summary {
  readonly summary: string
  readonly contentLength: number
  readonly returnedContentLength: number
  readonly startIndex: number
  readonly nextIndex: number | null
  readonly url: string
  readonly statusCode: number
  readonly source: string
  readonly serverName: string
  readonly functionName: string
  readonly status: string
  readonly rawResult: null
}

const summaryOf = (data: unknown): Summary => data as Summary

/** What the model reads of a failed fetch, word for word (the replayed reason is `message`). */
const modelReads = (url: string, failure: string) =>
  `Could not fetch ${url}: ${failure}. Tell the user the page could not be read; do not invent its content.`

describe("fetch_url", () => {
  it.effect("[97][issue 25] a Content-Length over MAX_FETCH_SIZE_MB stops the one GET before its body is read (dev and production with opt-in)", () =>
    Effect.gen(function* () {
      for (const mode of [{ production: false }, { production: true, allowPrivateNetwork: true }] as const) {
        const cap = mode.production ? 5 : 50
        let written = 0
        const server = yield* pageServer((_request, response) => {
          response.writeHead(200, { "content-type": "text/html", "content-length": String((cap + 1) * MIB) })
          // Would take the whole declared length; the client hangs up after the headers.
          const piece = Buffer.alloc(64 * 1024, 97)
          const pump = () => {
            while (written < (cap + 1) * MIB && !response.destroyed) {
              written += piece.length
              if (!response.write(piece)) return void response.once("drain", pump)
            }
            response.end()
          }
          pump()
        })
        const kit = fetchUrlKit(mode)
        const tool = yield* kit.tool
        const result = yield* kit.call(tool, { url: `${server.origin}/big` })
        assert.isFalse(result.success)
        assert.strictEqual(result.message, modelReads(`${server.origin}/big`, `too large (over ${cap} MB)`))
        assert.include(result.detail ?? "", "exceeds the maximum allowed size")
        assert.deepStrictEqual(server.requests.map((request) => request.method), ["GET"])
        assert.isBelow(written, (cap + 1) * MIB, "the body was not downloaded")
      }
    })
  )

  it.effect("[97][issue 25] a target blocked in production gets no request; the model reads the class, the detail keeps the address", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => response.end("secret"))
      const kit = fetchUrlKit({ production: true })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/` })
      assert.isFalse(result.success)
      assert.strictEqual(result.error, "blocked: a private address")
      assert.strictEqual(result.message, modelReads(`${server.origin}/`, "blocked: a private address"))
      assert.include(result.detail ?? "", "PRIVATE_NETWORK_BLOCKED")
      assert.include(result.detail ?? "", "address 127.0.0.1 is loopback")
      assert.include(result.detail ?? "", "FETCH_URL_ALLOW_PRIVATE_NETWORK=true")
      assert.strictEqual(server.connections(), 0)
      assert.deepStrictEqual(kit.connector.attempts, [])
    })
  )

  it.effect("[issue 25] a name that resolves to internal addresses: the model never reads the addresses or that they were resolved", () =>
    Effect.gen(function* () {
      const kit = fetchUrlKit({ production: true, dns: { postgres: ["172.18.0.3", "10.0.0.7"] } })
      const result = yield* kit.call(yield* kit.tool, { url: "http://postgres/" })
      assert.strictEqual(result.message, modelReads("http://postgres/", "blocked: a private address"))
      for (const field of [result.error, result.message]) {
        assert.notInclude(field ?? "", "172.18")
        assert.notInclude(field ?? "", "10.0.0.7")
        assert.notInclude(field ?? "", "resolved")
      }
      assert.include(result.detail ?? "", "resolved addresses: 172.18.0.3, 10.0.0.7")
    })
  )

  it.effect("[issue 25] a server that mishandles HEAD is read: fetch_url sends one GET per hop and never a HEAD", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((request, response) => {
        if (request.method === "HEAD") {
          // Broken HEAD handling: a 405 with a body, then the socket dropped.
          response.writeHead(405, { "content-type": "text/plain" })
          response.end("no HEAD here")
          request.socket.destroy()
          return
        }
        if (request.url === "/moved") {
          response.writeHead(302, { location: "/page" })
          response.end()
          return
        }
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("the page")
      })
      const kit = fetchUrlKit({ production: false })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/moved` })
      assert.isTrue(result.success)
      assert.include(summaryOf(result.data).summary, "the page")
      assert.deepStrictEqual(server.requests.map((request) => `${request.method} ${request.url}`), ["GET /moved", "GET /page"])
    })
  )

  it.effect("[issue 25] a binary answer is judged from the GET's headers: its body is never downloaded", () =>
    Effect.gen(function* () {
      let written = 0
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "application/octet-stream" })
        const piece = Buffer.alloc(64 * 1024, 1)
        const pump = () => {
          while (written < 8 * MIB && !response.destroyed) {
            written += piece.length
            if (!response.write(piece)) return void response.once("drain", pump)
          }
          response.end()
        }
        pump()
      })
      const kit = fetchUrlKit({ production: false })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/blob` })
      assert.isFalse(result.success)
      assert.strictEqual(result.message, modelReads(`${server.origin}/blob`, "not a text or HTML page"))
      assert.strictEqual(result.detail, "unsupported content type application/octet-stream")
      assert.isBelow(written, 8 * MIB)
    })
  )

  it("[98] engine order", () => {
    const dev = { allowPrivateNetwork: true }
    const prod = { allowPrivateNetwork: false }
    assert.deepStrictEqual(resolveEngineOrder([], prod).order, ["safe_http"])
    assert.deepStrictEqual(resolveEngineOrder(["mcp_fetch"], prod).order, ["safe_http"])
    assert.deepStrictEqual(resolveEngineOrder(["crawl4ai", "safe_http"], prod).order, ["safe_http"])
    assert.deepStrictEqual(resolveEngineOrder(["crawl4ai", "safe_http"], dev).order, ["crawl4ai", "safe_http"])
    assert.deepStrictEqual(resolveEngineOrder(["safe_http", "crawl4ai", "crawl4ai"], dev).order, ["crawl4ai", "safe_http"])
    assert.deepStrictEqual(resolveEngineOrder([" CRAWL4AI ", "Safe_Http", "bogus"], dev), {
      order: ["crawl4ai", "safe_http"],
      dropped: [{ name: "bogus", reason: "unknown engine" }]
    })
  })

  it.effect("[99] a public page redirecting to 169.254.169.254 is refused before the next request", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => {
        response.writeHead(302, { location: "https://169.254.169.254/latest/meta-data/" })
        response.end()
      })
      const kit = fetchUrlKit({
        production: true,
        dns: { "public.example": ["93.184.216.34"] },
        translate: { "93.184.216.34": "127.0.0.1" }
      })
      const result = yield* kit.call(yield* kit.tool, { url: `http://public.example:${server.port}/start` })
      assert.isFalse(result.success)
      assert.strictEqual(result.message, modelReads(`http://public.example:${server.port}/start`, "blocked: an address that is never reached"))
      assert.notInclude(result.message ?? "", "169.254")
      assert.include(result.detail ?? "", "cloud instance-metadata")
      assert.deepStrictEqual(
        kit.connector.attempts.map((attempt) => attempt.address),
        ["93.184.216.34"] // the one GET, never the metadata address
      )
      assert.deepStrictEqual(kit.connector.refused, [])
    })
  )

  it.effect("[100] 3 redirects succeed, 4 fail with Too many redirects", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((request, response) => {
        const hops = Number(/^\/r\/(\d+)/.exec(request.url ?? "")?.[1] ?? "0")
        if (hops > 0) {
          response.writeHead(302, { location: `/r/${hops - 1}` })
          response.end()
          return
        }
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("arrived")
      })
      const kit = fetchUrlKit({ production: false })
      const tool = yield* kit.tool
      const three = yield* kit.call(tool, { url: `${server.origin}/r/3` })
      assert.isTrue(three.success)
      assert.strictEqual(summaryOf(three.data).url, `${server.origin}/r/0`)
      assert.include(summaryOf(three.data).summary, "arrived")
      const before = server.requests.filter((request) => request.method === "GET").length
      const four = yield* kit.call(tool, { url: `${server.origin}/r/4` })
      assert.isFalse(four.success)
      assert.strictEqual(four.error, "too many redirects")
      assert.include(four.detail ?? "", "Too many redirects")
      // 4 GETs (/r/4 … /r/1); the 5th hop (/r/0) is never requested.
      const gets = server.requests.filter((request) => request.method === "GET").slice(before)
      assert.deepStrictEqual(gets.map((request) => request.url), ["/r/4", "/r/3", "/r/2", "/r/1"])
    })
  )

  it.effect("[101] a name that validates to 127.0.0.1 (dev) is connected through the pinned address", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end(`host=${request.headers.host}`)
      })
      const kit = fetchUrlKit({ production: false, dns: { "pinned.test": ["127.0.0.1"] } })
      const result = yield* kit.call(yield* kit.tool, { url: `http://pinned.test:${server.port}/` })
      assert.isTrue(result.success)
      assert.include(summaryOf(result.data).summary, `host=pinned.test:${server.port}`)
      assert.isTrue(kit.connector.attempts.every((attempt) => attempt.address === "127.0.0.1"))
    })
  )

  it.effect("[102] a body over the byte cap aborts the read with a size error", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        // Chunked, no Content-Length: only the byte cap can see the size.
        response.end(Buffer.alloc(1 * MIB, 97))
      })
      const kit = fetchUrlKit({ production: false, settings: { maxBodyBytes: 64 * 1024 } })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/` })
      assert.isFalse(result.success)
      assert.strictEqual(result.error, "too large (over 0.06 MB)")
      assert.include(result.detail ?? "", "exceeds the maximum allowed size")
    })
  )

  it.effect("[103] HTML becomes Markdown without script content; raw:true returns the HTML unchanged", () =>
    Effect.gen(function* () {
      const html = `<html><head><title>T</title><script>var leaked = "SCRIPT-CONTENT"</script></head><body><h1>Title</h1><p>Hello <b>world</b></p><style>.x{}</style><noscript>NOSCRIPT</noscript><template>TEMPLATE</template></body></html>`
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(html)
      })
      const kit = fetchUrlKit({ production: false })
      const tool = yield* kit.tool
      const markdown = yield* kit.call(tool, { url: `${server.origin}/` })
      assert.isTrue(markdown.success)
      const summary = summaryOf(markdown.data).summary
      assert.include(summary, "# Title")
      assert.include(summary, "Hello **world**")
      for (const hidden of ["SCRIPT-CONTENT", "NOSCRIPT", "TEMPLATE", ".x{}"]) assert.notInclude(summary, hidden)
      const raw = yield* kit.call(tool, { url: `${server.origin}/`, raw: true })
      assert.strictEqual(summaryOf(raw.data).summary, `**URL:** ${server.origin}/\n\n${html}`)
    })
  )

  it.effect("[104] 120000 characters come back as a 50000-character slice with a continuation hint", () =>
    Effect.gen(function* () {
      const content = Array.from({ length: 120_000 }, (_, index) => String.fromCharCode(97 + (index % 26))).join("")
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end(content)
      })
      const kit = fetchUrlKit({ production: false })
      const tool = yield* kit.tool
      const first = yield* kit.call(tool, { url: `${server.origin}/long` })
      assert.isTrue(first.success)
      const data = summaryOf(first.data)
      assert.strictEqual(data.summary, first.message)
      assert.strictEqual(data.returnedContentLength, 50_000)
      assert.strictEqual(data.contentLength, 120_000)
      assert.strictEqual(data.nextIndex, 50_000)
      assert.include(data.summary, "start_index=50000")
      assert.include(data.summary, content.slice(0, 50_000))
      assert.notInclude(data.summary, content.slice(0, 50_001))
      assert.deepStrictEqual(
        { source: data.source, serverName: data.serverName, functionName: data.functionName, status: data.status, rawResult: data.rawResult, statusCode: data.statusCode },
        { source: "http", serverName: "safe-http", functionName: "fetch_url", status: "completed", rawResult: null, statusCode: 200 }
      )
      const last = yield* kit.call(tool, { url: `${server.origin}/long`, start_index: 100_000.7, max_length: 90_000 })
      assert.strictEqual(summaryOf(last.data).returnedContentLength, 20_000)
      assert.strictEqual(summaryOf(last.data).nextIndex, null)
      const small = yield* kit.call(tool, { url: `${server.origin}/long`, max_length: 10.9 })
      assert.strictEqual(summaryOf(small.data).returnedContentLength, 10)
    })
  )

  it.effect("[105] start_index past the end succeeds with the end-of-content summary", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end("short page")
      })
      const kit = fetchUrlKit({ production: false })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/`, start_index: 500 })
      assert.isTrue(result.success)
      assert.include(summaryOf(result.data).summary, "[End of page content")
      assert.strictEqual(summaryOf(result.data).returnedContentLength, 0)
    })
  )

  it.effect("an empty page answers with the no-readable-content summary", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end("<html><body><script>only()</script></body></html>")
      })
      const kit = fetchUrlKit({ production: false })
      const result = yield* kit.call(yield* kit.tool, { url: `${server.origin}/` })
      assert.isTrue(result.success)
      assert.include(summaryOf(result.data).summary, "[The page returned no readable content.]")
      assert.strictEqual(summaryOf(result.data).contentLength, 0)
    })
  )

  it.effect("[95] an unresolvable host makes no request at all, Crawl4AI included", () =>
    Effect.gen(function* () {
      const crawl = yield* pageServer((_request, response) => response.end(JSON.stringify({ markdown: "x", success: true })))
      const kit = fetchUrlKit({
        production: false,
        settings: { engineOrder: ["crawl4ai", "safe_http"], crawl4aiBaseUrl: Option.some(crawl.origin) }
      })
      const result = yield* kit.call(yield* kit.tool, { url: "http://nowhere.invalid/page" })
      assert.isFalse(result.success)
      assert.strictEqual(result.message, modelReads("http://nowhere.invalid/page", "unreachable"))
      assert.include(result.detail ?? "", "DNS_RESOLUTION_FAILED")
      assert.strictEqual(crawl.connections(), 0)
      assert.deepStrictEqual(kit.connector.attempts, [])
    })
  )

  it.effect("Crawl4AI answers first where admitted; its failure falls through to safe_http", () =>
    Effect.gen(function* () {
      let crawlFails = false
      const crawl = yield* pageServer((_request, response, body) => {
        if (crawlFails) {
          response.writeHead(500)
          response.end("{}")
          return
        }
        const { url } = JSON.parse(body) as { url: string }
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ url, filter: "fit", markdown: `# From Crawl4AI\n\n${url}`, success: true }))
      })
      const page = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end("<h1>From safe_http</h1>")
      })
      const kit = fetchUrlKit({
        production: false,
        settings: { engineOrder: ["crawl4ai"], crawl4aiBaseUrl: Option.some(crawl.origin) }
      })
      const tool = yield* kit.tool
      const viaCrawl = yield* kit.call(tool, { url: `${page.origin}/a` })
      assert.strictEqual(summaryOf(viaCrawl.data).source, "crawl4ai")
      assert.include(summaryOf(viaCrawl.data).summary, "# From Crawl4AI")
      crawlFails = true
      const viaHttp = yield* kit.call(tool, { url: `${page.origin}/a` })
      assert.strictEqual(summaryOf(viaHttp.data).source, "http")
      assert.include(summaryOf(viaHttp.data).summary, "# From safe_http")
    })
  )

  it.effect("bad arguments, HTTP errors and binary content are clear failures; progress names the URL", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((request, response) => {
        if (request.url === "/missing") {
          response.writeHead(404, { "content-type": "text/html" })
          response.end("nope")
          return
        }
        response.writeHead(200, { "content-type": "image/png" })
        response.end(Buffer.from([137, 80, 78, 71]))
      })
      const kit = fetchUrlKit({ production: false })
      const tool = yield* kit.tool
      const empty = yield* kit.call(tool, { url: "  " })
      assert.isFalse(empty.success)
      assert.include(empty.error ?? "", "url must be a non-empty string")
      const negative = yield* kit.call(tool, { url: server.origin, start_index: -1 })
      assert.include(negative.error ?? "", "start_index must be a non-negative number")
      const zero = yield* kit.call(tool, { url: server.origin, max_length: 0 })
      assert.include(zero.error ?? "", "max_length must be a positive number")
      const missing = yield* kit.call(tool, { url: `${server.origin}/missing` })
      assert.strictEqual(missing.message, modelReads(`${server.origin}/missing`, "the site answered HTTP 404"))
      assert.deepStrictEqual(missing.progress, [`Fetching ${server.origin}/missing`])
      const image = yield* kit.call(tool, { url: `${server.origin}/png` })
      assert.strictEqual(image.error, "not a text or HTML page")
      assert.strictEqual(image.detail, "unsupported content type image/png")
      const ftp = yield* kit.call(tool, { url: "ftp://example.com/file" })
      assert.strictEqual(ftp.message, modelReads("ftp://example.com/file", "blocked: only http and https URLs are fetched"))
      assert.include(ftp.detail ?? "", "INVALID_PROTOCOL")
      assert.isFalse(tool.isAvailableFor("novelai"))
      assert.isTrue(tool.requiresFollowUp === true && tool.category === "search")
    })
  )

  it.effect("a kill or the tool timeout (interruption) and the turn's AbortSignal close the page socket", () =>
    Effect.gen(function* () {
      // Waits on the sockets' own close events: no clock, no polling (a socket left open hangs the test).
      const arrived = yield* Deferred.make<void>()
      const interruptedClosed = yield* Deferred.make<void>()
      const server = yield* pageServer((request) => {
        // The GET never gets an answer.
        request.socket.on("close", () => Deferred.doneUnsafe(interruptedClosed, Exit.void))
        Deferred.doneUnsafe(arrived, Exit.void)
      })
      const kit = fetchUrlKit({ production: false })
      const tool = yield* kit.tool
      const interrupted = yield* Effect.forkChild(kit.call(tool, { url: `${server.origin}/hang` }))
      yield* Deferred.await(arrived)
      assert.isFalse(yield* Deferred.isDone(interruptedClosed))
      yield* Fiber.interrupt(interrupted)
      yield* Deferred.await(interruptedClosed)

      const again = yield* Deferred.make<void>()
      const abortedClosed = yield* Deferred.make<void>()
      const server2 = yield* pageServer((request) => {
        request.socket.on("close", () => Deferred.doneUnsafe(abortedClosed, Exit.void))
        Deferred.doneUnsafe(again, Exit.void)
      })
      const controller = new AbortController()
      const aborted = yield* Effect.forkChild(kit.call(tool, { url: `${server2.origin}/hang` }, { abortSignal: controller.signal }))
      yield* Deferred.await(again)
      assert.isFalse(yield* Deferred.isDone(abortedClosed))
      controller.abort()
      const result = yield* Fiber.join(aborted)
      assert.isFalse(result.success)
      assert.include(result.error ?? "", "cancelled")
      yield* Deferred.await(abortedClosed)
    })
  )
})
