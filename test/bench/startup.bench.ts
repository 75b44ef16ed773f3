/**
 * Start-up, footprint and cold steps (issue 16), every contender a fresh process:
 *
 * 1. `--once` start-up: wall time (spawn → exit, measured here) and peak RSS (getrusage of the
 *    child, reported by a preload on exit), median of 10, contenders interleaved. loopcord runs
 *    its compiled build (`node dist/main.js`, and `npm start` as a user types it) scripted on
 *    `sqlite::memory:`, and against the loopback server like the AI SDK one-shot script; the
 *    floor is `node -e 0`.
 * 1b. The interactive chat to its prompt: configured, and a first start with nothing configured
 *    (the loopback probe of local model servers: none answering, or a fake Ollama), median of 10.
 * 2. Idle RSS (VmRSS 2 s after ready) of the terminal front and of the Discord front logged
 *    into the fake Discord, with a bare discord.js Client as the Discord floor; median of 3.
 * 3. Cold steps: 40 tool steps (each an unknown-tool error sent back to the model) in one fresh
 *    `--once` process versus the AI SDK script in a fresh process, against one loopback server;
 *    per-step gap = the server's last byte of step k → arrival of request k+1 (server stamps).
 *    loopcord at its default logging (info, json lines as RUN_ENV=production gives, stderr drained) and at LOG_LEVEL=none, so
 *    the logging cost per step shows.
 *
 * dist/ is built first when stale (the same check as prestart).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { FakeDiscord } from "../support/fakeDiscord/FakeDiscord"
import { type Records, unknownToolText } from "./support/loopServer"
import { spawnLoopServer } from "./support/serverProcess"
import { check, fmt, loadLine, ms, percentile, ratio, sleep } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..")
const quick = process.env.BENCH_QUICK === "1"
const STARTUP_RUNS = quick ? 3 : 10
const IDLE_RUNS = quick ? 1 : 3
const COLD_RUNS = quick ? 2 : 5
const COLD_STEPS = 40

const nowNs = (): number => Number(process.hrtime.bigint())

interface ProcessRun {
  readonly code: number | null
  readonly wallMs: number
  /** Peak RSS of the largest process of the run (MiB), from the preload. */
  readonly peakRssMiB: number
  /** CPU time (user + system) of every process of the run together, ms. */
  readonly cpuMs: number
  readonly stdout: string
  readonly stderr: string
  readonly startedAt: number
}

/** Runs a command to its end with the peak-RSS preload; stdout and stderr are drained. */
const runProcess = (command: string, args: ReadonlyArray<string>, env: Record<string, string>): Promise<ProcessRun> =>
  new Promise((resolve, reject) => {
    const rssDir = mkdtempSync(join(tmpdir(), "loopcord-rss-"))
    const preload = pathToFileURL(join(here, "support", "reportPeakRss.mjs")).href
    const startedAt = nowNs()
    const child = spawn(command, args, {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NODE_OPTIONS: `--import=${preload}`, LOOPCORD_BENCH_RSS_DIR: rssDir, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (piece: Buffer) => stdout.push(piece))
    child.stderr.on("data", (piece: Buffer) => stderr.push(piece))
    child.once("error", reject)
    child.once("close", (code) => {
      const wallMs = ms(nowNs() - startedAt)
      const reports = readdirSync(rssDir).map((file) => readFileSync(join(rssDir, file), "utf8").split(" "))
      const peaks = reports.map((fields) => Number(fields[0]))
      const cpuMicros = reports.reduce((sum, fields) => sum + Number(fields[1]), 0)
      rmSync(rssDir, { recursive: true, force: true })
      resolve({
        code,
        wallMs,
        peakRssMiB: peaks.length === 0 ? Number.NaN : Math.max(...peaks) / 1024,
        cpuMs: reports.length === 0 ? Number.NaN : cpuMicros / 1000,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        startedAt
      })
    })
  })

const vmRssMiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN)
  return kb / 1024
}

/** Starts a long-running process, waits for `ready`, lets it settle 2 s, samples its RSS, stops it. */
const idleRss = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: (output: string) => boolean,
  options: { readonly stdinOpen?: boolean } = {}
): Promise<number> => {
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, ...env },
    stdio: [options.stdinOpen === true ? "pipe" : "ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (piece: Buffer) => (output += piece.toString("utf8")))
  child.stderr?.on("data", (piece: Buffer) => (output += piece.toString("utf8")))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    const deadline = Date.now() + 60_000
    while (!ready(output)) {
      check(child.exitCode === null, `${args.join(" ")} exited before it was ready: ${output.slice(-2000)}`)
      check(Date.now() < deadline, `${args.join(" ")} not ready after 60 s: ${output.slice(-2000)}`)
      await sleep(20)
    }
    await sleep(2000)
    return vmRssMiB(child.pid!)
  } finally {
    child.kill("SIGTERM")
    await Promise.race([exited, sleep(10_000)])
    if (child.exitCode === null) child.kill("SIGKILL")
  }
}

const median = (values: ReadonlyArray<number>) => percentile(values, 50)

/** Spawn → the interactive chat's ready line on stdout (stdin kept open), then the process is stopped. */
const timeToPrompt = async (command: string, args: ReadonlyArray<string>, env: Record<string, string>, ready: string): Promise<{ readonly ms: number; readonly output: string }> => {
  const startedAt = nowNs()
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let output = ""
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    const readyAt = await new Promise<number>((resolve, reject) => {
      const onData = (piece: Buffer) => {
        output += piece.toString("utf8")
        if (output.includes(ready)) resolve(nowNs())
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", (piece: Buffer) => (output += piece.toString("utf8")))
      child.once("exit", () => reject(new Error(`${args.join(" ")} exited before its prompt: ${output.slice(-2000)}`)))
      setTimeout(() => reject(new Error(`${args.join(" ")}: no prompt after 60 s: ${output.slice(-2000)}`)), 60_000)
    })
    return { ms: ms(readyAt - startedAt), output }
  } finally {
    child.kill("SIGTERM")
    await Promise.race([exited, sleep(10_000)])
    if (child.exitCode === null) child.kill("SIGKILL")
  }
}

/** A loopback stand-in for Ollama: its model lists, nothing else (the chat is not used). */
const fakeOllama = async (): Promise<{ readonly port: number; readonly close: () => Promise<void> }> => {
  const models = { models: [{ name: "qwen3:4b", model: "qwen3:4b" }] }
  const server = createServer((request, response) => {
    response.writeHead(request.url === "/api/ps" || request.url === "/api/tags" ? 200 : 404, { "content-type": "application/json" })
    response.end(JSON.stringify(models))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** A loopback port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const main = async () => {
  const loadAtStart = loadLine()
  execFileSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
  const server = await spawnLoopServer()
  const loopbackEnv = {
    LLM_PROVIDER: "openai-compatible",
    LLM_BASE_URL: server.baseUrl,
    LLM_API_KEYS: "bench-key",
    LLM_MODELS: "bench-model",
    DATABASE_URL: "sqlite::memory:"
  }
  const aiSdkScript = join(here, "support", "aiSdkOnce.mjs")

  // 1. --once start-up.
  let turn = 0
  const nextId = () => `s${++turn}`
  interface StartupContender {
    readonly name: string
    readonly run: () => Promise<ProcessRun>
    readonly expect?: (run: ProcessRun, id: string) => void
  }
  const onceReport = (run: ProcessRun) => JSON.parse(run.stdout.trim()) as { readonly status: string; readonly text: string }
  const startupContenders: ReadonlyArray<StartupContender> = [
    { name: "`node -e 0` (floor)", run: () => runProcess(process.execPath, ["-e", "0"], {}) },
    {
      name: "loopcord `node dist/main.js --once` (scripted)",
      run: () => runProcess(process.execPath, ["dist/main.js", "--once", "hi", "--json"], { LLM_PROVIDER: "scripted", DATABASE_URL: "sqlite::memory:" }),
      expect: (run) => check(onceReport(run).text === "You said: hi", `scripted --once: ${run.stdout} ${run.stderr}`)
    },
    {
      name: "loopcord `npm start --silent -- --once` (scripted)",
      run: () => runProcess("npm", ["start", "--silent", "--", "--once", "hi", "--json"], { LLM_PROVIDER: "scripted", DATABASE_URL: "sqlite::memory:" }),
      expect: (run) => check(onceReport(run).text === "You said: hi", `npm start --once: ${run.stdout} ${run.stderr}`)
    },
    {
      name: "loopcord `node dist/main.js --once` (loopback server)",
      run: () => runProcess(process.execPath, ["dist/main.js", "--once", `turn:${nextId()}:loop:0`, "--json"], loopbackEnv),
      expect: (run) => check(onceReport(run).text.startsWith("Turn s"), `loopback --once: ${run.stdout} ${run.stderr}`)
    },
    {
      name: "AI SDK one-shot `streamText` (loopback server)",
      run: () => runProcess(process.execPath, [aiSdkScript, server.baseUrl, `turn:${nextId()}:loop:0`], {}),
      expect: (run) => check(onceReport(run).text.startsWith("Turn s"), `AI SDK one-shot: ${run.stdout} ${run.stderr}`)
    }
  ]
  const startup = new Map<string, Array<ProcessRun>>()
  for (const contender of startupContenders) {
    // Warm the page cache and dist/ once, unmeasured.
    const warm = await contender.run()
    check(warm.code === 0, `${contender.name} exited ${warm.code}: ${warm.stderr.slice(-2000)}`)
  }
  for (let round = 0; round < STARTUP_RUNS; round += 1) {
    const order = round % 2 === 0 ? startupContenders : [...startupContenders].reverse()
    for (const contender of order) {
      process.stderr.write(`  startup: ${contender.name} (run ${round + 1})\n`)
      const run = await contender.run()
      check(run.code === 0, `${contender.name} exited ${run.code}: ${run.stderr.slice(-2000)}`)
      contender.expect?.(run, "")
      startup.set(contender.name, [...(startup.get(contender.name) ?? []), run])
    }
  }
  const loadAfterStartup = loadLine()

  // 1b. The interactive chat to its prompt: configured, and a first start (nothing configured) that
  // probes Ollama, LM Studio and llama.cpp on loopback (closed ports here, or a fake Ollama).
  const ollama = await fakeOllama()
  const nowhere = `ollama=${await closedPort()},lmstudio=${await closedPort()},llamacpp=${await closedPort()}`
  const withOllama = `ollama=${ollama.port},lmstudio=${await closedPort()},llamacpp=${await closedPort()}`
  const READY = "loopcord terminal chat as"
  interface PromptContender {
    readonly name: string
    readonly run: () => Promise<{ readonly ms: number; readonly output: string }>
    readonly expect: string
  }
  const promptContenders: ReadonlyArray<PromptContender> = [
    { name: "`node dist/main.js`, LLM_PROVIDER=scripted (configured)", run: () => timeToPrompt(process.execPath, ["dist/main.js"], { LLM_PROVIDER: "scripted", DATABASE_URL: "sqlite::memory:" }, READY), expect: READY },
    { name: "`node dist/main.js`, nothing configured, no local server (demo)", run: () => timeToPrompt(process.execPath, ["dist/main.js"], { LOOPCORD_LOCAL_MODEL_SERVERS: nowhere, DATABASE_URL: "sqlite::memory:" }, READY), expect: "scripted demo" },
    { name: "`node dist/main.js`, nothing configured, a local Ollama", run: () => timeToPrompt(process.execPath, ["dist/main.js"], { LOOPCORD_LOCAL_MODEL_SERVERS: withOllama, DATABASE_URL: "sqlite::memory:" }, READY), expect: "Found Ollama" },
    {
      name: "`node dist/main.js`, the same Ollama configured (LLM_BASE_URL, LLM_MODELS)",
      run: () => timeToPrompt(process.execPath, ["dist/main.js"], { LLM_BASE_URL: `http://127.0.0.1:${ollama.port}/v1`, LLM_MODELS: "qwen3:4b", DATABASE_URL: "sqlite::memory:" }, READY),
      expect: READY
    },
    { name: "`npm start`, nothing configured, no local server (demo)", run: () => timeToPrompt("npm", ["start", "--silent"], { LOOPCORD_LOCAL_MODEL_SERVERS: nowhere, DATABASE_URL: "sqlite::memory:" }, READY), expect: "scripted demo" }
  ]
  const prompts = new Map<string, Array<number>>()
  try {
    for (const contender of promptContenders) await contender.run()
    for (let round = 0; round < STARTUP_RUNS; round += 1) {
      const order = round % 2 === 0 ? promptContenders : [...promptContenders].reverse()
      for (const contender of order) {
        process.stderr.write(`  to the prompt: ${contender.name} (run ${round + 1})\n`)
        const run = await contender.run()
        check(run.output.includes(contender.expect), `${contender.name}: ${run.output.slice(-2000)}`)
        prompts.set(contender.name, [...(prompts.get(contender.name) ?? []), run.ms])
      }
    }
  } finally {
    await ollama.close()
  }
  const loadAfterPrompts = loadLine()

  // 2. Idle RSS.
  const fake = await FakeDiscord.start({})
  const idle = { terminal: [] as Array<number>, discord: [] as Array<number>, floor: [] as Array<number> }
  try {
    for (let round = 0; round < IDLE_RUNS; round += 1) {
      process.stderr.write(`  idle RSS (round ${round + 1})\n`)
      idle.terminal.push(await idleRss(process.execPath, ["dist/main.js"], { LLM_PROVIDER: "scripted", DATABASE_URL: "sqlite::memory:" }, (output) => output.includes("loopcord terminal chat"), { stdinOpen: true }))
      // Ready = this process registered the commands.
      fake.registeredCommands.clear()
      idle.discord.push(await idleRss(process.execPath, ["dist/main.js"], {
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase,
        LLM_PROVIDER: "scripted",
        DATABASE_URL: "sqlite::memory:"
      }, () => fake.registeredCommands.size > 0))
      idle.floor.push(await idleRss(process.execPath, [join(here, "support", "discordClientIdle.mjs")], {
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase
      }, (output) => output.includes("READY")))
    }
  } finally {
    await fake.close()
  }

  // 3. Cold steps.
  const loadBeforeCold = loadLine()
  interface ColdContender {
    readonly name: string
    readonly run: (id: string) => Promise<ProcessRun>
  }
  const coldEnv = { ...loopbackEnv, BOT_MAX_CONSECUTIVE_TOOL_ERRORS: "100" }
  const coldContenders: ReadonlyArray<ColdContender> = [
    { name: "loopcord (default logging: info, json)", run: (id) => runProcess(process.execPath, ["dist/main.js", "--once", `turn:${id}:unknown:${COLD_STEPS}`, "--json"], coldEnv) },
    { name: "loopcord (LOG_LEVEL=none)", run: (id) => runProcess(process.execPath, ["dist/main.js", "--once", `turn:${id}:unknown:${COLD_STEPS}`, "--json"], { ...coldEnv, LOG_LEVEL: "none" }) },
    { name: "AI SDK", run: (id) => runProcess(process.execPath, [aiSdkScript, server.baseUrl, `turn:${id}:unknown:${COLD_STEPS}`], {}) }
  ]
  const cold = new Map<string, { gaps: Array<number>; firstRequestMs: Array<number>; wallMs: Array<number> }>()
  await server.records({ clear: true })
  for (let round = 0; round < COLD_RUNS; round += 1) {
    const order = round % 2 === 0 ? coldContenders : [...coldContenders].reverse()
    for (const contender of order) {
      process.stderr.write(`  cold steps: ${contender.name} (run ${round + 1})\n`)
      const id = `c${contender.name.replace(/[^a-z]/gi, "").slice(0, 12)}${round}`
      const run = await contender.run(id)
      check(run.code === 0, `${contender.name} exited ${run.code}: ${run.stderr.slice(-2000)}`)
      check(onceReport(run).text === unknownToolText(id, COLD_STEPS), `${contender.name}: ${run.stdout.slice(0, 500)}`)
      const records: Records = await server.records({ clear: true })
      const requests = records.turns[id] ?? []
      check(requests.length === COLD_STEPS + 1, `${contender.name}: ${requests.length} model calls, expected ${COLD_STEPS + 1}`)
      const entry = cold.get(contender.name) ?? { gaps: [], firstRequestMs: [], wallMs: [] }
      for (let k = 0; k < COLD_STEPS; k += 1) entry.gaps.push(ms(requests[k + 1]!.arrived - requests[k]!.lastByte!))
      entry.firstRequestMs.push(ms(requests[0]!.arrived - run.startedAt))
      entry.wallMs.push(run.wallMs)
      cold.set(contender.name, entry)
    }
  }
  await server.stop()
  const loadAtEnd = loadLine()

  // The section.
  const lines: Array<string> = [
    "## Start-up, footprint and cold steps (fresh processes), loopcord vs AI SDK vs `node -e 0`",
    "",
    `Every run a fresh process; contenders interleaved (order reversed every other round). loopcord runs its compiled build (\`npm run build\`, what \`npm start\` runs). Peak RSS = the child's getrusage maxrss (a preload reports it on exit; \`npm start\` counts its largest process, loopcord's). Idle RSS = VmRSS 2 s after the front is ready (terminal: its banner; Discord: commands registered on the fake Discord).`,
    "",
    `${loadAtStart}`,
    "",
    `### \`--once\` start-up, median of ${STARTUP_RUNS}`,
    "",
    "| contender | wall ms (median) | wall ms (min / max) | CPU ms (median) | peak RSS MiB (median) | wall / floor |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  const floorWall = median(startup.get(startupContenders[0]!.name)!.map((run) => run.wallMs))
  for (const contender of startupContenders) {
    const runs = startup.get(contender.name)!
    const walls = runs.map((run) => run.wallMs)
    lines.push(`| ${contender.name} | ${fmt(median(walls))} | ${fmt(Math.min(...walls))} / ${fmt(Math.max(...walls))} | ${fmt(median(runs.map((run) => run.cpuMs)))} | ${fmt(median(runs.map((run) => run.peakRssMiB)), 1)} | ${ratio(median(walls), floorWall)} |`)
  }
  const wallOf = (index: number) => median(startup.get(startupContenders[index]!.name)!.map((run) => run.wallMs))
  const cpuOf = (index: number) => median(startup.get(startupContenders[index]!.name)!.map((run) => run.cpuMs))
  const rssOf = (index: number) => median(startup.get(startupContenders[index]!.name)!.map((run) => run.peakRssMiB))
  lines.push(
    "",
    `loopcord / AI SDK against the same loopback server: wall ${ratio(wallOf(3), wallOf(4))}, CPU ${ratio(cpuOf(3), cpuOf(4))}, peak RSS ${ratio(rssOf(3), rssOf(4))}.`,
    `(${loadAfterStartup.replace(/^Machine: /, "after the start-up runs: ")})`,
    "",
    `### The interactive chat to its prompt (spawn → its ready line), median of ${STARTUP_RUNS}`,
    "",
    "A first start (nothing configured) probes Ollama, LM Studio and llama.cpp on loopback first (at most 500 ms; a closed port answers at once), then opens the chat against what it found, or the scripted demo.",
    "",
    "| contender | ms (median) | ms (min / max) | / configured |",
    "|---|---:|---:|---:|",
    ...promptContenders.map((contender) => {
      const times = prompts.get(contender.name) ?? []
      return `| ${contender.name} | ${fmt(median(times))} | ${fmt(Math.min(...times))} / ${fmt(Math.max(...times))} | ${ratio(median(times), median(prompts.get(promptContenders[0]!.name) ?? []))} |`
    }),
    `(${loadAfterPrompts.replace(/^Machine: /, "after these runs: ")})`,
    "",
    `### Idle RSS, median of ${IDLE_RUNS}`,
    "",
    "| front | idle RSS MiB |",
    "|---|---:|",
    `| loopcord terminal front (interactive, scripted model) | ${fmt(median(idle.terminal), 1)} |`,
    `| loopcord Discord front (fake Discord, scripted model) | ${fmt(median(idle.discord), 1)} |`,
    `| bare discord.js Client, same intents (floor) | ${fmt(median(idle.floor), 1)} |`,
    "",
    `Discord front / bare client: ${ratio(median(idle.discord), median(idle.floor))}.`,
    "",
    `### Cold steps: ${COLD_STEPS} tool steps in one fresh process, ${COLD_RUNS} processes each`,
    "",
    `Every step an unknown-tool error sent back to the model (loopcord: BOT_MAX_CONSECUTIVE_TOOL_ERRORS=100; both allow 100 steps). Gap = server's last byte of step k → arrival of request k+1, milliseconds, all ${COLD_STEPS * COLD_RUNS} gaps per contender. First request = spawn → the server receives the first model call.`,
    "",
    `${loadBeforeCold}`,
    "",
    "| contender | gap p50 | gap p90 | gap p99 | gap max | first request ms (median) | process wall ms (median) | p50 / AI SDK | p99 / AI SDK |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  )
  const sdk = cold.get("AI SDK")!
  for (const contender of coldContenders) {
    const entry = cold.get(contender.name)!
    lines.push(
      `| ${contender.name} | ${fmt(percentile(entry.gaps, 50))} | ${fmt(percentile(entry.gaps, 90))} | ${fmt(percentile(entry.gaps, 99))} | ${fmt(Math.max(...entry.gaps))} | ${fmt(median(entry.firstRequestMs))} | ${fmt(median(entry.wallMs))} | ${ratio(percentile(entry.gaps, 50), percentile(sdk.gaps, 50))} | ${ratio(percentile(entry.gaps, 99), percentile(sdk.gaps, 99))} |`
    )
  }
  const ours = cold.get(coldContenders[0]!.name)!
  const silent = cold.get(coldContenders[1]!.name)!
  const meets = (value: number, limit: number) => (value <= limit ? "met" : "NOT met")
  lines.push(
    "",
    `Logging cost per step (default info / LOG_LEVEL=none): p50 ${ratio(percentile(ours.gaps, 50), percentile(silent.gaps, 50))}, p99 ${ratio(percentile(ours.gaps, 99), percentile(silent.gaps, 99))}.`,
    `(${loadAtEnd.replace(/^Machine: /, "at the end: ")})`,
    "",
    "Targets:",
    `- \`--once\` wall ≤ 1.0 s: \`npm start\` ${fmt(wallOf(2))} ms ${meets(wallOf(2), 1000)}; \`node dist/main.js\` ${fmt(wallOf(1))} ms ${meets(wallOf(1), 1000)}.`,
    `- first start (nothing configured) to the prompt ≤ 1.0 s: \`npm start\` ${fmt(median(prompts.get(promptContenders[4]!.name) ?? []))} ms ${meets(median(prompts.get(promptContenders[4]!.name) ?? []), 1000)}; found Ollama ${fmt(median(prompts.get(promptContenders[2]!.name) ?? []))} ms ${meets(median(prompts.get(promptContenders[2]!.name) ?? []), 1000)} (${ratio(median(prompts.get(promptContenders[2]!.name) ?? []), median(prompts.get(promptContenders[3]!.name) ?? []))}× the same server configured).`,
    `- \`--once\` peak RSS ≤ 120 MB: ${fmt(rssOf(1), 1)} MiB ${meets(rssOf(1), 120)}.`,
    `- idle RSS of the Discord front ≤ 150 MB: ${fmt(median(idle.discord), 1)} MiB ${meets(median(idle.discord), 150)}.`,
    `- cold-process per-step p50 ≤ 1.0× AI SDK: ${ratio(percentile(ours.gaps, 50), percentile(sdk.gaps, 50))} ${meets(percentile(ours.gaps, 50) / percentile(sdk.gaps, 50), 1)}; p99 ≤ 1.0×: ${ratio(percentile(ours.gaps, 99), percentile(sdk.gaps, 99))} ${meets(percentile(ours.gaps, 99) / percentile(sdk.gaps, 99), 1)}.`
  )
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
