/**
 * A busy shard (issue 27): N replies at once under Discord's global rate limit, and an idle
 * shard of 2,500 guilds.
 *
 * 1. Busy: N = 50, 100, 300 channels, one mention each at the same moment; every reply makes one
 *    tool call, then streams 60 sentences over 6 s. The bot is a separate process (the whole
 *    Discord front as `main` wires it, real discord.js, scripted model; support/scaleBot.ts);
 *    the fake Discord runs here and enforces both of Discord's limits: 50 requests in any second
 *    (429 with `X-RateLimit-Global`) and 5 message writes per 5 s per channel (real
 *    `X-RateLimit-*` headers). Side by side: the request budget as shipped, and the same bot
 *    with the budget off (discord.js's own fixed one-second windows only: the bot before it).
 *    Per run: replies whole, global and per-route 429s, the most requests in any one second,
 *    lag from the model finishing a reply to Discord having its final text (p50, p99), peak RSS
 *    and CPU ms per turn of the bot process, p99 event-loop delay while the replies stream.
 * 2. Idle: the bot logged into 2,500 guilds of realistic size (25 text channels, 20 roles, 30
 *    emojis, 25 members, 5 stickers each), RSS 5 s after ready and a full collection, against a
 *    bare discord.js client with discord.js's default caches in the same guilds.
 * The bot runs with the V8 flags it ships with (NODE_MEMORY_FLAGS: what `npm start`, the
 * shard processes and the Docker image pass to node); the largest busy case and the idle case
 * run once more with V8's defaults (the bot before the flags). The largest busy case and the
 * idle case as shipped run `SCALE_RUNS` times (default 3): the targets are judged on the
 * median, every run is listed.
 *
 * `BENCH_QUICK=1`: N = 50 only, 500 idle guilds, one run each.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { NODE_MEMORY_FLAGS } from "../../src/discord/nodeMemoryFlags"
import { FakeDiscord } from "../support/fakeDiscord/FakeDiscord"
import { scaleAnswer } from "./support/scaleScript"
import { check, fmt, loadLine, percentile, ratio, sleep } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..")
const quick = process.env.BENCH_QUICK === "1"
/** `SCALE_SIZES=300` runs only those sizes (profiling one case); `SCALE_MODES=budget` likewise. */
const SIZES = process.env.SCALE_SIZES !== undefined ? process.env.SCALE_SIZES.split(",").map(Number) : quick ? [50] : [50, 100, 300]
const MODES = (process.env.SCALE_MODES?.split(",") ?? ["budget", "off"]) as ReadonlyArray<"budget" | "off">
const SENTENCES = 60
const SENTENCE_MS = 100
const IDLE_GUILDS = quick ? 500 : 2500
const WHOLE_TIMEOUT_MS = 180_000
const RUNS = Math.max(1, Number(process.env.SCALE_RUNS ?? (quick ? 1 : 3)))

interface BotReport {
  readonly finishedAt: Readonly<Record<string, number>>
  readonly cpuMs: number
  readonly eventLoopDelayP99Ms: number
  readonly eventLoopDelayMaxMs: number
  readonly peakRssMiB: number
  readonly rssMiB: number
}

/** The flags the bot ships with, and none (V8's defaults: the bot before them). */
const SHIPPED: ReadonlyArray<string> = NODE_MEMORY_FLAGS
const V8_DEFAULTS: ReadonlyArray<string> = []
const isShipped = (flags: ReadonlyArray<string>) => flags === SHIPPED

interface BusyRun {
  readonly mode: "budget" | "off"
  readonly flags: ReadonlyArray<string>
  readonly n: number
  readonly whole: number
  readonly global429: number
  readonly route429: number
  readonly peakPerSecond: number
  readonly requests: number
  readonly typing: number
  readonly historyReads: number
  readonly lagP50: number
  readonly lagP99: number
  readonly allWholeMs: number
  readonly report: BotReport
}

/**
 * The bot compiled as `npm run build` compiles the app (esbuild, effect imported module by
 * module, packages from node_modules), so it runs as plain JavaScript like `npm start`, not
 * through tsx (whose transpiler would count in its memory).
 */
const compileBot = async (): Promise<string> => {
  const esbuild = await import("esbuild")
  const { rewriteEffectBarrel } = (await import(join(root, "scripts", "build.mjs"))) as { rewriteEffectBarrel: (source: string) => string }
  const outfile = join(here, ".out", "scaleBot.mjs")
  await esbuild.build({
    entryPoints: [join(here, "support", "scaleBot.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    plugins: [{
      name: "loopcord-like-build",
      setup(build) {
        build.onResolve({ filter: /^[^./]/ }, (args) => (/^(effect|@effect\/[^/]+)(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true }))
        build.onLoad({ filter: /\/(src|test)\/.*\.ts$/ }, async (args) => ({ contents: rewriteEffectBarrel(readFileSync(args.path, "utf8")), loader: "ts" }))
      }
    }]
  })
  return outfile
}

let botEntry = ""

const startBot = (fake: FakeDiscord, env: Record<string, string>, flags: ReadonlyArray<string> = []) =>
  new Promise<{ child: ChildProcess; guilds: number }>((resolve, reject) => {
    const child = fork(botEntry, [], {
      // `SCALE_BOT_FLAGS=--cpu-prof` profiles the bot process.
      execArgv: [...flags, ...(process.env.SCALE_BOT_FLAGS?.split(" ").filter((flag) => flag.length > 0) ?? [])],
      env: { ...process.env, TOKEN: fake.token, API_BASE: fake.apiBase, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "ignore", "inherit", "ipc"]
    })
    child.once("exit", (code) => reject(new Error(`the bot exited (${code}) before it was ready`)))
    child.on("message", (message: { readonly ready?: true; readonly guilds?: number }) => {
      if (message.ready === true) resolve({ child, guilds: message.guilds ?? 0 })
    })
  })

const ask = (child: ChildProcess) =>
  new Promise<BotReport>((resolve) => {
    child.on("message", (message: BotReport | { readonly ready: true }) => {
      if ("finishedAt" in message) resolve(message)
    })
    child.send({ report: true })
  })

/** When Discord had the final text of a channel's reply: the last successful write to its messages. */
const finalTextAt = (fake: FakeDiscord, channelId: string): number =>
  Math.max(...fake.requests.filter((request) =>
    (request.method === "POST" || request.method === "PATCH") && request.status === 200 && request.path.startsWith(`/channels/${channelId}/messages`)
  ).map((request) => request.doneAt))

const busyRun = async (mode: "budget" | "off", n: number, flags: ReadonlyArray<string> = SHIPPED): Promise<BusyRun> => {
  const fake = await FakeDiscord.start({ globalLimit: { perSecond: 50 }, messageBucket: { limit: 5, windowMs: 5000 } })
  try {
    const channels = Array.from({ length: n }, (_, index) => fake.addChannel({ kind: "text", name: `busy-${index}` }))
    const { child } = await startBot(fake, { BUDGET: mode, SENTENCES: String(SENTENCES), SENTENCE_MS: String(SENTENCE_MS) }, flags)
    await sleep(500)
    const since = Date.now()
    child.send({ go: true })
    channels.forEach((channel, index) => fake.userSays(channel, `go ${index}`, { mentionBot: true }))
    // Messages split at whitespace: the reply is whole when its words, in order, are the answer's.
    const words = (text: string) => text.split(/\s+/).filter((word) => word.length > 0).join(" ")
    const expected = channels.map((_, index) => words(scaleAnswer(String(index), SENTENCES)))
    const isWhole = (index: number) => words(fake.botMessages(channels[index]!.id).map((message) => message.content).join(" ")) === expected[index]
    const allWhole = () => channels.every((_, index) => isWhole(index))
    await fake.waitFor(allWhole, WHOLE_TIMEOUT_MS, "every reply whole").catch(() => undefined)
    const allWholeMs = Date.now() - since
    // Late writes (a reply that was whole but not done) would change nothing: give the bot a moment.
    await sleep(1000)
    const report = await ask(child)
    await new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const lags = channels.flatMap((channel, index) => {
      const finished = report.finishedAt[String(index)]
      return finished === undefined ? [] : [finalTextAt(fake, channel.id) - finished]
    })
    const after = fake.requests.filter((request) => request.at >= since)
    return {
      mode,
      flags,
      n,
      whole: channels.filter((_, index) => isWhole(index)).length,
      global429: fake.rateLimited.global,
      route429: fake.rateLimited.route,
      peakPerSecond: fake.peakRequestsPerWindow(1000, since),
      requests: after.length,
      typing: after.filter((request) => /\/typing$/.test(request.path)).length,
      historyReads: after.filter((request) => request.method === "GET" && /^\/channels\/\d+\/messages$/.test(request.path)).length,
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
      allWholeMs,
      report
    }
  } finally {
    await fake.close()
  }
}

/** VmRSS of a process, in MiB. */
const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((entry) => entry.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? Number.NaN) / 1024
}

const idleFake = async (guilds: number) => {
  const fake = await FakeDiscord.start({})
  const stickers = Array.from({ length: 5 }, (_, i) => ({ id: `${9_000_000_000_000_000 + i}`, name: `sticker-${i}` }))
  for (let g = 0; g < guilds; g++) {
    const guild = fake.addGuild(`guild-${g}`, stickers, undefined, undefined, { roles: 20, emojis: 30, members: 25 })
    for (let c = 0; c < 25; c++) fake.addChannel({ kind: "text", name: `channel-${c}`, guildId: guild.id })
  }
  return fake
}

const idleBot = async (guilds: number, flags: ReadonlyArray<string> = SHIPPED): Promise<{ rss: number; heap: number; guilds: number }> => {
  const fake = await idleFake(guilds)
  try {
    const { child, guilds: seen } = await startBot(fake, { BUDGET: "on" }, ["--expose-gc", ...flags])
    await sleep(5000)
    const heap = await new Promise<number>((resolve) => {
      child.on("message", (message: { readonly collected?: true; readonly heapUsedMiB?: number }) => {
        if (message.collected === true) resolve(message.heapUsedMiB ?? Number.NaN)
      })
      child.send({ gc: true })
    })
    await sleep(1000)
    const rss = rssOf(child.pid ?? 0)
    child.kill("SIGKILL")
    return { rss, heap, guilds: seen }
  } finally {
    await fake.close()
  }
}

const idleBareClient = async (guilds: number): Promise<number> => {
  const fake = await idleFake(guilds)
  try {
    const child = spawn(process.execPath, ["--expose-gc", join(here, "support", "discordClientIdle.mjs")], {
      env: { ...process.env, DISCORD_TOKEN: fake.token, DISCORD_API_BASE_URL: fake.apiBase },
      stdio: ["ignore", "pipe", "inherit"]
    })
    await new Promise<void>((resolve) => child.stdout?.on("data", (chunk: Buffer) => chunk.toString().includes("READY") && resolve()))
    await sleep(5000)
    child.kill("SIGUSR2")
    await sleep(1000)
    const rss = rssOf(child.pid ?? 0)
    child.kill("SIGKILL")
    return rss
  } finally {
    await fake.close()
  }
}

const median = (values: ReadonlyArray<number>): number => percentile([...values], 50)

const main = async () => {
  botEntry = await compileBot()
  const load = loadLine()
  const busy: Array<BusyRun> = []
  const biggest = Math.max(...SIZES)
  const noteRun = (run: BusyRun) => {
    busy.push(run)
    const { report: { finishedAt: _finished, ...measures }, ...counts } = run
    process.stderr.write(`    ${JSON.stringify({ ...counts, ...measures })}\n`)
  }
  for (const n of process.env.SCALE_ONLY_IDLE === "1" ? [] : SIZES) {
    for (const mode of MODES) {
      const runs = mode === "budget" && n === biggest ? RUNS : 1
      for (let run = 0; run < runs; run++) {
        process.stderr.write(`  scale: ${n} replies, budget ${mode}${runs > 1 ? ` (run ${run + 1} of ${runs})` : ""}\n`)
        noteRun(await busyRun(mode, n))
      }
    }
  }
  if (MODES.includes("budget") && process.env.SCALE_ONLY_IDLE !== "1" && process.env.SCALE_SKIP_DEFAULTS !== "1") {
    process.stderr.write(`  scale: ${biggest} replies, budget, V8 defaults\n`)
    noteRun(await busyRun("budget", biggest, V8_DEFAULTS))
  }
  const loadAfterBusy = loadLine()
  if (process.env.SCALE_SKIP_IDLE === "1") return
  const idles: Array<{ rss: number; heap: number; guilds: number }> = []
  for (let run = 0; run < RUNS; run++) {
    process.stderr.write(`  scale: idle ${IDLE_GUILDS} guilds (run ${run + 1} of ${RUNS})\n`)
    const idle = await idleBot(IDLE_GUILDS)
    process.stderr.write(`    idle: ${fmt(idle.rss, 0)} MiB RSS, ${fmt(idle.heap, 0)} MiB heap after a full collection\n`)
    check(idle.guilds === IDLE_GUILDS + 1, `the bot saw ${idle.guilds} guilds`)
    idles.push(idle)
  }
  if (process.env.SCALE_ONLY_IDLE === "1") return
  const idleDefaults = await idleBot(IDLE_GUILDS, V8_DEFAULTS)
  const bare = await idleBareClient(IDLE_GUILDS)
  const idleRss = median(idles.map((idle) => idle.rss))
  const idleHeap = median(idles.map((idle) => idle.heap))

  const flagsLabel = (flags: ReadonlyArray<string>) => (isShipped(flags) ? "" : ", V8 defaults (before the flags)")
  const row = (run: BusyRun) =>
    `| ${run.n} | ${run.mode === "budget" ? "budget (45/s)" : "no budget (before)"}${flagsLabel(run.flags)} | ${run.whole}/${run.n} | ${run.global429} | ${run.route429} | ${run.peakPerSecond} | ${fmt(run.requests / run.n, 2)} | ${run.typing} | ${run.historyReads} | ${fmt(run.lagP50 / 1000, 2)} | ${fmt(run.lagP99 / 1000, 2)} | ${fmt(run.allWholeMs / 1000, 1)} | ${fmt(run.report.peakRssMiB, 0)} | ${fmt(run.report.cpuMs / run.n, 1)} | ${fmt(run.report.eventLoopDelayP99Ms, 1)} |`
  const pair = (n: number) => {
    const on = busy.find((run) => run.n === n && run.mode === "budget" && isShipped(run.flags))!
    const off = busy.find((run) => run.n === n && run.mode === "off")!
    return `- N = ${n}: global 429s ${on.global429} vs ${off.global429}; peak requests/s ${ratio(on.peakPerSecond, off.peakPerSecond)}×; requests per turn ${ratio(on.requests, off.requests)}×; lag p99 ${ratio(on.lagP99, off.lagP99)}×; CPU per turn ${ratio(on.report.cpuMs, off.report.cpuMs)}×; peak RSS ${ratio(on.report.peakRssMiB, off.report.peakRssMiB)}×.`
  }
  const tops = busy.filter((run) => run.n === biggest && run.mode === "budget" && isShipped(run.flags))
  const topDefaults = busy.find((run) => run.n === biggest && run.mode === "budget" && !isShipped(run.flags))
  const of = (pick: (run: BusyRun) => number) => median(tops.map(pick))
  const top = {
    whole: Math.min(...tops.map((run) => run.whole)),
    global429: Math.max(...tops.map((run) => run.global429)),
    peakPerSecond: Math.max(...tops.map((run) => run.peakPerSecond)),
    lagP99: of((run) => run.lagP99),
    eventLoopP99: of((run) => run.report.eventLoopDelayP99Ms),
    peakRss: of((run) => run.report.peakRssMiB),
    cpuPerTurn: of((run) => run.report.cpuMs / run.n)
  }
  const meets = (ok: boolean) => (ok ? "met" : "NOT met")
  const each = (pick: (run: BusyRun) => number, digits: number) => tops.map((run) => fmt(pick(run), digits)).join(", ")
  const lines = [
    "## scale.bench.ts",
    "",
    `${load}`,
    "",
    `Busy shard: N channels mention the bot at once; each reply makes one tool call, then streams ${SENTENCES} sentences over ${(SENTENCES * SENTENCE_MS) / 1000} s. The bot runs as its own process (the whole Discord front, real discord.js, scripted model) with the V8 flags it ships with (\`${SHIPPED.join(" ")}\`, as \`npm start\` and the image run it) unless the row says V8 defaults; the fake Discord enforces 50 requests in any 1 s (global 429s) and 5 message writes per 5 s per channel. "requests/turn" counts every REST request after the mentions; "lag" runs from the model finishing a reply to Discord having its final text; RSS, CPU and event-loop delay are the bot process's, CPU and delay from the mentions to the report. N = ${biggest} with the budget runs ${tops.length} time(s).`,
    "",
    "| N | bot | replies whole | global 429 | route 429 | most requests in 1 s | requests/turn | typing | history GETs | lag p50 (s) | lag p99 (s) | all whole after (s) | peak RSS (MiB) | CPU ms/turn | event-loop p99 (ms) |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...busy.map(row),
    "",
    "Budget vs no budget (ratios are budget / no budget):",
    ...SIZES.filter((n) => busy.some((run) => run.n === n && run.mode === "off") && busy.some((run) => run.n === n && run.mode === "budget")).map(pair),
    "",
    `${loadAfterBusy.replace("when the section started", "after the busy runs")}`,
    "",
    `Idle shard of ${IDLE_GUILDS} guilds (25 text channels, 20 roles, 30 emojis, 25 members, 5 stickers each), RSS 5 s after ready and a full collection (heap used after it: ${fmt(idleHeap, 0)} MiB, median):`,
    "",
    "| process | RSS (MiB) |",
    "|---|---|",
    `| loopcord Discord front, as shipped (median of ${idles.length}: ${idles.map((idle) => fmt(idle.rss, 0)).join(", ")}) | ${fmt(idleRss, 0)} |`,
    `| loopcord Discord front, V8 defaults (before the flags; heap used ${fmt(idleDefaults.heap, 0)} MiB) | ${fmt(idleDefaults.rss, 0)} |`,
    `| bare discord.js client, default caches, V8 defaults | ${fmt(bare, 0)} |`,
    "",
    `loopcord / bare client: ${ratio(idleRss, bare)}.`,
    "",
    `Targets (N = ${biggest}: medians of ${tops.length} run(s); whole, 429s and requests/s: the worst run):`,
    `- ${biggest} replies: all whole ${top.whole}/${biggest} (${meets(top.whole === biggest)}); global 429s ${top.global429} (${meets(top.global429 === 0)}); most requests in 1 s ${top.peakPerSecond} ≤ 50 (${meets(top.peakPerSecond <= 50)}); lag p99 ${fmt(top.lagP99 / 1000, 2)} s ≤ 15 (${meets(top.lagP99 <= 15_000)}); event-loop delay p99 ${fmt(top.eventLoopP99, 1)} ms ≤ 50 (${meets(top.eventLoopP99 <= 50)}; runs: ${each((run) => run.report.eventLoopDelayP99Ms, 1)}); peak RSS ${fmt(top.peakRss, 0)} MiB ≤ 400 (${meets(top.peakRss <= 400)}; runs: ${each((run) => run.report.peakRssMiB, 0)}); CPU ${fmt(top.cpuPerTurn, 1)} ms per turn.`,
    ...(topDefaults === undefined ? [] : [`- the same with V8's defaults (before the flags): lag p99 ${fmt(topDefaults.lagP99 / 1000, 2)} s; event-loop delay p99 ${fmt(topDefaults.report.eventLoopDelayP99Ms, 1)} ms; peak RSS ${fmt(topDefaults.report.peakRssMiB, 0)} MiB; CPU ${fmt(topDefaults.report.cpuMs / topDefaults.n, 1)} ms per turn.`]),
    `- idle ${IDLE_GUILDS} guilds: ${fmt(idleRss, 0)} MiB ≤ 250 (${meets(idleRss <= 250)}); with V8's defaults: ${fmt(idleDefaults.rss, 0)} MiB.`,
    ""
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
}

void main().then(() => process.exit(0), (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
