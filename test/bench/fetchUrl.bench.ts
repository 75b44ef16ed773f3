/**
 * fetch_url end to end (gate 1, one pinned GET through safe_http judged by its headers, byte cap,
 * HTML → Markdown, slicing) versus the floor: plain `undici.fetch` + `res.text()` + the same
 * converter, on the same loopback pages (1 KB to 2 MB of HTML) served by a separate process,
 * interleaved in the same run. Target: fetch_url ≤ 1.15× the floor.
 */
import { spawn } from "node:child_process"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Deferred, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { fetch as undiciFetch } from "undici"
import { FetchConfig } from "../../src/config/FetchConfig"
import { AddressPolicy, DnsResolver } from "../../src/fetch/AddressPolicy"
import { HtmlConverter } from "../../src/fetch/html/HtmlConverter"
import { htmlToMarkdown } from "../../src/fetch/html/htmlToMarkdown"
import { SafeHttp } from "../../src/fetch/SafeHttp"
import { SocketConnector } from "../../src/fetch/SocketConnector"
import { fetchUrlTool } from "../../src/tools/builtin/fetchUrl/FetchUrlTool"
import { ToolContext, type ToolContextShape } from "../../src/tools/ToolContext"
import { makeTurnState } from "../../src/tools/TurnState"
import { check, fmt, loadLine, percentile, ratio } from "./support/stats"

const quick = process.env.BENCH_QUICK === "1"

/** A realistic article: nav chrome, headings, paragraphs with inline markup, lists, code, tables. */
const articlePage = (targetBytes: number): string => {
  const nav = `<header><nav><ul>${Array.from({ length: 12 }, (_, i) => `<li><a href="/s${i}">Section ${i}</a></li>`).join("")}</ul></nav></header>`
  const block = (i: number) =>
    i % 7 === 3
      ? `<h2>Heading ${i}</h2><ul><li>first item ${i}</li><li>second item</li><li>third <a href="/x">link</a></li></ul>`
      : i % 11 === 5
        ? `<pre><code class="language-ts">const x${i} = ${i}\nconsole.log(x${i})</code></pre>`
        : i % 13 === 7
          ? `<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>${i}</td><td>two</td></tr></tbody></table>`
          : `<p>Paragraph ${i} explains <a href="https://example.com/ref/${i}">a reference</a> with <strong>bold</strong> and <em>emphasis</em>, plus <code>inline()</code> code. Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>`
  let body = ""
  for (let i = 0; body.length < targetBytes - 700; i++) body += block(i)
  return `<!doctype html><html><head><title>Article</title><style>body{color:red}</style><script>var s = 1</script></head><body>${nav}<main><article><h1>Article title</h1>${body}</article></main><footer>footer</footer></body></html>`
}

const SIZES: ReadonlyArray<readonly [string, number, number]> = [
  ["1 KB", 1024, quick ? 30 : 200],
  ["16 KB", 16 * 1024, quick ? 20 : 120],
  ["128 KB", 128 * 1024, quick ? 8 : 40],
  ["512 KB", 512 * 1024, quick ? 4 : 16],
  ["2 MB", 2 * 1024 * 1024, quick ? 3 : 8]
]

/** The page server runs in its own process so it never competes with the contenders' event loop. */
const SERVER = `
const http = require("node:http")
const chunks = []
process.stdin.on("data", (chunk) => chunks.push(chunk))
process.stdin.on("end", () => {
const pages = JSON.parse(Buffer.concat(chunks).toString("utf8"))
const server = http.createServer((req, res) => {
  const page = pages[req.url]
  if (page === undefined) { res.writeHead(404); res.end(); return }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(page) })
  res.end(req.method === "HEAD" ? undefined : page)
})
server.keepAliveTimeout = 60000
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"))
})
`

const startServer = (pages: Record<string, string>) =>
  new Promise<{ readonly port: number; readonly stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", SERVER], { stdio: ["pipe", "pipe", "inherit"] })
    child.once("error", reject)
    child.stdin.end(JSON.stringify(pages))
    child.stdout.once("data", (chunk: Buffer) => resolve({ port: Number(chunk.toString().trim()), stop: () => child.kill() }))
  })

const main = async () => {
  const pages: Record<string, string> = {}
  for (const [label, bytes] of SIZES) pages[`/${label.replace(" ", "")}`] = articlePage(bytes)
  const server = await startServer(pages)
  const origin = `http://127.0.0.1:${server.port}`

  const runtime = ManagedRuntime.make(
    Layer.merge(SafeHttp.Default, HtmlConverter.Default).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          FetchConfig.make({ production: false }),
          AddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(DnsResolver.system)),
          SocketConnector.system
        )
      )
    )
  )
  const tool = await runtime.runPromise(fetchUrlTool)
  const context: ToolContextShape = await runtime.runPromise(
    Effect.gen(function* () {
      const killed = yield* Deferred.make<void>()
      return {
        channelId: "bench", guildId: undefined, userId: "bench", messageId: undefined, isDM: true,
        provider: "bench", model: "bench", locale: "en", persona: { id: undefined, name: "bench", avatarUrl: undefined, systemPrompt: "" },
        isUserImpersonation: false, impersonatedUserId: undefined,
        suppressProgressNotices: true, showKillHint: false, iteration: 0, turnState: yield* makeTurnState(),
        abortSignal: new AbortController().signal, killed: Deferred.await(killed), progress: () => Effect.void
      }
    })
  )

  const viaFetchUrl = async (url: string): Promise<string> => {
    const exit = await runtime.runPromiseExit(Effect.provideService(tool.execute({ url }), ToolContext, context))
    check(Exit.isSuccess(exit) && exit.value.success, `fetch_url failed for ${url}: ${JSON.stringify(Exit.isSuccess(exit) ? exit.value : exit.cause)}`)
    return Exit.isSuccess(exit) ? (exit.value.message ?? "") : ""
  }
  const viaFloor = async (url: string): Promise<string> => {
    const response = await undiciFetch(url)
    const text = await response.text()
    return htmlToMarkdown(text, { baseUrl: new URL(url) }).text
  }

  const lines: Array<string> = [
    "## fetchUrl.bench.ts — fetch_url end to end vs undici.fetch + the same converter",
    "",
    loadLine(),
    "Pages: generated articles (nav, headings, paragraphs, lists, code, tables) served from a separate process on 127.0.0.1 with keep-alive; contenders interleaved, medians of N runs after warm-up.",
    "fetch_url does more work than the floor: gate-1 validation, a pinned connection per hop (one GET, type and size judged from its headers), a byte-capped read and the 50 000-character slice.",
    "",
    "| page | N | floor median ms | fetch_url median ms | ratio of medians | median of paired ratios | floor p95 | fetch_url p95 |",
    "|---|---|---|---|---|---|---|---|"
  ]
  let floorTotal = 0
  let oursTotal = 0
  for (const [label, , runs] of SIZES) {
    const url = `${origin}/${label.replace(" ", "")}`
    // Same content: the fetch_url slice is the floor's Markdown, cut at 50 000 characters.
    const ours = await viaFetchUrl(url)
    const floor = await viaFloor(url)
    check(ours.includes(floor.slice(0, 1000)), `${label}: fetch_url and the floor disagree on the content`)
    for (let warm = 0; warm < 3; warm++) {
      await viaFetchUrl(url)
      await viaFloor(url)
    }
    const floorTimes: Array<number> = []
    const ourTimes: Array<number> = []
    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? ([viaFloor, viaFetchUrl] as const) : ([viaFetchUrl, viaFloor] as const)
      for (const contender of order) {
        const started = performance.now()
        await contender(url)
        const elapsed = performance.now() - started
        ;(contender === viaFloor ? floorTimes : ourTimes).push(elapsed)
      }
    }
    // Each run times both contenders back to back: the paired ratio is robust to machine hiccups.
    const pairedRatio = percentile(ourTimes.map((ours, index) => ours / (floorTimes[index] ?? Number.NaN)), 50)
    const floorMedian = percentile(floorTimes, 50)
    const ourMedian = percentile(ourTimes, 50)
    floorTotal += floorMedian
    oursTotal += ourMedian
    lines.push(
      `| ${label} | ${runs} | ${fmt(floorMedian)} | ${fmt(ourMedian)} | ${ratio(ourMedian, floorMedian)} | ${fmt(pairedRatio)} | ${fmt(percentile(floorTimes, 95))} | ${fmt(percentile(ourTimes, 95))} |`
    )
  }
  lines.push(
    "",
    `Whole page set (sum of medians): floor ${fmt(floorTotal)} ms, fetch_url ${fmt(oursTotal)} ms, ratio **${ratio(oursTotal, floorTotal)}** (target ≤ 1.15).`
  )

  // Event-loop delay while the 2 MB page is fetched and converted: fetch_url converts it in a
  // worker thread; the floor converts on the main thread (what fetch_url did before).
  const bigUrl = `${origin}/2MB`
  const delayRuns = quick ? 2 : 6
  const delayDuring = async (contender: (url: string) => Promise<string>) => {
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    histogram.enable()
    for (let run = 0; run < delayRuns; run++) await contender(bigUrl)
    histogram.disable()
    return { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, samples: histogram.count }
  }
  const floorDelay = await delayDuring(viaFloor)
  const ourDelay = await delayDuring(viaFetchUrl)
  lines.push(
    "",
    `### Event-loop delay while the 2 MB page is fetched and converted (${delayRuns} pages back to back)`,
    "",
    "`perf_hooks.monitorEventLoopDelay` (1 ms resolution) over the whole run, milliseconds. fetch_url converts pages of 64 KiB and more in a worker thread; the floor converts on the main thread, as fetch_url did before.",
    "",
    "| contender | p50 | p99 | max | samples |",
    "|---|---:|---:|---:|---:|",
    `| floor (undici.fetch + converter on the event loop) | ${fmt(floorDelay.p50)} | ${fmt(floorDelay.p99)} | ${fmt(floorDelay.max)} | ${floorDelay.samples} |`,
    `| fetch_url (converter in a worker thread) | ${fmt(ourDelay.p50)} | ${fmt(ourDelay.p99)} | ${fmt(ourDelay.max)} | ${ourDelay.samples} |`,
    "",
    `p99 fetch_url / floor: ${ratio(ourDelay.p99, floorDelay.p99)}. Target (event-loop delay ≤ 20 ms p99 while converting the 2 MB page): ${ourDelay.p99 <= 20 ? "met" : "NOT met"} (${fmt(ourDelay.p99)} ms).`
  )
  await runtime.dispose()
  server.stop()
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
