import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { execFile, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { fakeDiscord, waitUntil } from "../support/fakeDiscord"
import { repoRoot } from "../terminal/cliProcess"

/**
 * The image as an operator runs it: `docker build .`, `--once` in a container, the bot in a
 * container turning healthy on a fake Discord, and `docker stop` (its default 10 s) while one
 * reply is still streaming and another is about to finish. Runs where a container engine
 * answers; elsewhere it is skipped with a message. `npm run image:smoke` runs only this file
 * and fails instead of skipping when no engine answers.
 *
 * Loopback only: `--once` runs with no network at all; the bot shares the host's network
 * (`--network host`) and is pointed at the fake Discord on 127.0.0.1, with its health server
 * on 127.0.0.1 too.
 */

const required = process.env["LOOPCORD_IMAGE_SMOKE"] === "1"
const IMAGE = "loopcord:smoke"

const engine = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8", timeout: 15_000 })
const engineAnswers = engine.status === 0
const whyNot = engine.error !== undefined
  ? `no docker command (${engine.error.message})`
  : (engine.stderr ?? "").trim().split("\n")[0] ?? `docker version exited ${engine.status}`
if (!engineAnswers) {
  console.warn(`image.smoke.test: SKIPPED, no container engine answers (${whyNot}); start one and run npm run image:smoke`)
}

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

const execute = (command: string, args: ReadonlyArray<string>, timeoutMs: number) =>
  new Promise<Ran>((resolve) => {
    const started = Date.now()
    execFile(command, [...args], { cwd: repoRoot, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })

const dockerNow = (args: ReadonlyArray<string>, timeoutMs = 60_000) => execute("docker", args, timeoutMs)
const docker = (args: ReadonlyArray<string>, timeoutMs = 60_000) => Effect.promise(() => dockerNow(args, timeoutMs))

/** Fails with the command's output unless it exited 0. */
const ok = (ran: Ran, what: string) => {
  assert.strictEqual(ran.code, 0, `${what}:\n${ran.stdout}\n${ran.stderr}`)
  return ran
}

/** The base image of the Dockerfile: local, pulled, or made here where Docker Hub is unreachable. */
const ensureBaseImage = async () => {
  const from = /^FROM\s+(\S+)/m.exec(readFileSync(join(repoRoot, "Dockerfile"), "utf8"))?.[1] ?? ""
  if ((await dockerNow(["image", "inspect", from])).code === 0) return `${from} (local)`
  if ((await dockerNow(["pull", from], 600_000)).code === 0) return `${from} (pulled)`
  const made = await execute("bash", [join(repoRoot, "scripts", "image-base.sh")], 900_000)
  ok(made, `${from} is neither local nor pullable, and scripts/image-base.sh could not make it`)
  return `${from} (made by scripts/image-base.sh in ${Math.round(made.ms / 1000)} s)`
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** Real time until `check` holds (polled). */
const eventually = <A>(what: string, check: Effect.Effect<A | undefined>, timeout: Duration.Input) =>
  check.pipe(
    Effect.flatMap((value) => (value === undefined ? Effect.fail("not yet" as const) : Effect.succeed(value))),
    Effect.retry(Schedule.spaced(Duration.millis(250))),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new Error(`timed out waiting for ${what}`)) }),
    Effect.orDie
  )

/** The bot's log lines from SIGTERM on (JSON lines), with their times, and when the container ended. */
const shutdownLines = (output: string, finishedAt: string) => {
  const lines = output.split("\n").filter((line) => line.startsWith("{"))
  const from = lines.findIndex((line) => line.includes("Shutting down"))
  const shown = (from < 0 ? lines.slice(-5) : lines.slice(from)).map((line) => {
    const record = JSON.parse(line) as { readonly timestamp?: string; readonly message?: unknown }
    return `  ${record.timestamp ?? "?"} ${String(record.message).slice(0, 120)}`
  })
  return [...shown, `  ${finishedAt} the container exited`].join("\n")
}

const log = (line: string) => Effect.sync(() => console.info(`image.smoke.test: ${line}`))

describe.skipIf(!engineAnswers && !required)("the container image (docker build, --once, health on a fake Discord, docker stop mid-reply)", () => {
  beforeAll(async () => {
    assert.isTrue(engineAnswers, `npm run image:smoke needs a container engine: ${whyNot}`)
    const base = await ensureBaseImage()
    const built = ok(await dockerNow(["build", "-t", IMAGE, "."], 1_500_000), "docker build")
    const size = (await dockerNow(["image", "inspect", IMAGE, "--format", "{{.Size}}"])).stdout.trim()
    console.info(`image.smoke.test: built ${IMAGE} on ${base} in ${Math.round(built.ms / 1000)} s, ${Math.round(Number(size) / 1e6)} MB`)
  }, 1_800_000)

  it.live("--once in a container with no network: exit 0 and the JSON report", () =>
    Effect.gen(function*() {
      const ran = yield* docker(["run", "--rm", "--network", "none", "-e", "LLM_PROVIDER=scripted", IMAGE, "node", "dist/main.js", "--once", "hi", "--json"])
      yield* log(`--once: exit ${ran.code} in ${ran.ms} ms (container start to exit)`)
      assert.strictEqual(ran.code, 0, ran.stderr)
      const report = JSON.parse(ran.stdout.trim()) as { status: string; text: string }
      assert.strictEqual(report.status, "completed")
      assert.strictEqual(report.text, "You said: hi")
    }), 120_000)

  it.live("no DISCORD_TOKEN and no -it: one line naming DISCORD_TOKEN, exit 1 (a restart policy does not meet a bot that looks fine)", () =>
    Effect.gen(function*() {
      const ran = yield* docker(["run", "--rm", "--network", "none", "-e", "LLM_PROVIDER=scripted", IMAGE])
      yield* log(`no token, no terminal: exit ${ran.code} in ${ran.ms} ms`)
      assert.strictEqual(ran.code, 1, ran.stdout + ran.stderr)
      assert.strictEqual(ran.stdout, "")
      const lines = ran.stderr.trimEnd().split("\n")
      assert.strictEqual(lines.length, 1, ran.stderr)
      assert.match(lines[0] ?? "", /^loopcord: DISCORD_TOKEN is not set/)
    }), 120_000)

  it.live("the bot turns healthy on a fake Discord; docker stop (10 s) mid-reply drains: one reply finishes, the other is marked stopped, exit 0", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const second = fake.addChannel({ kind: "text", name: "second", guildId: fake.guild.id })
      const healthPort = yield* Effect.promise(freePort)
      // The first model call streams for a minute (stopped by the drain); the second finishes 3 s in.
      const script = JSON.stringify({
        passes: [
          [{ text: "Long reply begins. " }, { sleepMs: 60_000 }, { text: "Long reply ends." }],
          [{ text: "Short reply begins. " }, { sleepMs: 3_000 }, { text: "Short reply ends." }]
        ],
        then: "echo"
      })
      const env = {
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase,
        LLM_PROVIDER: "scripted",
        LLM_SCRIPT: script,
        HEALTH_HOST: "127.0.0.1",
        HEALTH_PORT: String(healthPort),
        LOG_LEVEL: "info"
      }
      const started = Date.now()
      const id = yield* Effect.acquireRelease(
        Effect.map(
          docker([
            "run",
            "-d",
            "--network",
            "host",
            // Docker 20.10 has no --health-start-interval: the first check would wait the image's 15 s interval.
            "--health-interval",
            "1s",
            ...Object.entries(env).flatMap(([name, value]) => ["-e", `${name}=${value}`]),
            IMAGE
          ]),
          (ran) => ok(ran, "docker run -d").stdout.trim()
        ),
        (container) => Effect.asVoid(docker(["rm", "-f", "-v", container]))
      )
      const logs = Effect.map(docker(["logs", id]), (ran) => ran.stdout + ran.stderr)

      const health = yield* eventually(
        "the container to turn healthy",
        Effect.map(docker(["inspect", "--format", "{{.State.Health.Status}}", id]), (ran) => (ran.stdout.trim() === "healthy" ? "healthy" : undefined)),
        "120 seconds"
      ).pipe(Effect.tapCause(() => Effect.flatMap(logs, (output) => log(output))))
      const healthyMs = Date.now() - started
      yield* waitUntil(fake, "slash commands registered", () => fake.registeredCommands.size > 0, 60_000)
      yield* log(`bot: ${health} ${healthyMs} ms after docker run`)

      const latest = (channel: { readonly id: string }) => fake.botMessages(channel.id).at(-1)?.content ?? ""
      fake.userSays(second, "tell me a long story", { mentionBot: true })
      yield* waitUntil(fake, "the long reply to start", () => latest(second).includes("Long reply begins."), 30_000)
      fake.userSays(fake.channel, "and a short one", { mentionBot: true })
      yield* waitUntil(fake, "the short reply to start", () => latest(fake.channel).includes("Short reply begins."), 30_000)

      // docker stop's own default: SIGTERM, then SIGKILL after 10 s.
      const stopped = ok(yield* docker(["stop", id], 60_000), "docker stop")
      const state = (yield* docker(["inspect", "--format", "{{.State.ExitCode}}", id])).stdout.trim()
      const output = yield* logs
      const finishedAt = (yield* docker(["inspect", "--format", "{{.State.FinishedAt}}", id])).stdout.trim()
      yield* log(`docker stop took ${stopped.ms} ms; exit code ${state}; the container's shutdown:\n${shutdownLines(output, finishedAt)}`)
      assert.strictEqual(state, "0", output)
      assert.isBelow(stopped.ms, 10_000, "the drain ended before Docker's SIGKILL")
      assert.include(latest(fake.channel), "Short reply ends.", output)
      assert.notInclude(latest(fake.channel), STOPPED_MARKER)
      assert.isTrue(latest(second).endsWith(STOPPED_MARKER), latest(second))
      assert.notInclude(latest(second), "Long reply ends.")
      assert.match(output, /the grace period ran out; replies in 1 channel\(s\) were stopped/)
    }), 300_000)
})
