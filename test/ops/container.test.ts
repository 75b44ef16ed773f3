import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parse as parseYaml } from "yaml"
import { definedVariables } from "../../src/config/catalog"

/**
 * The recipe checked against the repository: the image's build steps are the commands CI and
 * the scripts run (and those are run for real here), and the compose file uses the health
 * endpoint and variables that exist. The image itself is built and run by
 * test/ops/image.smoke.test.ts where a container engine answers.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const read = (file: string) => readFileSync(join(root, file), "utf8")

interface Instruction {
  readonly keyword: string
  readonly args: string
}

interface Stage {
  readonly from: string
  readonly name: string | undefined
  readonly instructions: ReadonlyArray<Instruction>
}

/** Dockerfile → stages of instructions (comments dropped, `\` continuations joined). */
const parseDockerfile = (text: string): ReadonlyArray<Stage> => {
  const logical = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
  const stages: Array<{ from: string; name: string | undefined; instructions: Array<Instruction> }> = []
  for (const line of logical) {
    const [keyword = "", ...rest] = line.split(/\s+/)
    const args = rest.join(" ")
    if (keyword.toUpperCase() === "FROM") {
      const [image = "", as, name] = rest
      stages.push({ from: image, name: as?.toUpperCase() === "AS" ? name : undefined, instructions: [] })
    } else {
      stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args })
    }
  }
  return stages
}

const run = (command: string, args: ReadonlyArray<string>) =>
  Effect.callback<{ readonly code: number; readonly output: string }>((resume) => {
    execFile(command, [...args], { cwd: root, timeout: 180_000 }, (error, stdout, stderr) => {
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr }))
    })
  })

const stages = parseDockerfile(read("Dockerfile"))
const [build, runtime] = [stages[0], stages.at(-1)]
const packageJson = JSON.parse(read("package.json")) as { scripts: Record<string, string>; engines: { node: string } }
const of = (stage: Stage | undefined, keyword: string) => (stage?.instructions ?? []).filter((instruction) => instruction.keyword === keyword)

describe("Dockerfile", () => {
  it("multi-stage on the Node major of engines.node; no compiler anywhere (better-sqlite3 ships its addon prebuilt), no build tool in the image that runs", () => {
    assert.isAtLeast(stages.length, 2)
    const major = /(\d+)/.exec(packageJson.engines.node)?.[1]
    assert.strictEqual(major, "24")
    for (const stage of stages) assert.match(stage.from, new RegExp(`^node:${major}(-|$)`), stage.from)
    const buildSteps = of(build, "RUN").map((step) => step.args).join("\n")
    assert.match(buildSteps, /apt-get install .*python3.*make/, "gyp's check for the prebuilt addon needs Python and make")
    assert.notMatch(buildSteps, /g\+\+|gcc|build-essential/)
    assert.notMatch(of(runtime, "RUN").map((step) => step.args).join("\n"), /apt-get|g\+\+|make /, "no toolchain in the image that runs")
    assert.include(of(runtime, "COPY").map((step) => step.args).join("\n"), `--from=${build?.name}`)
  })

  it("builds with the commands CI and the scripts run: npm ci (as .ci/run), npm run build, then drops dev dependencies", () => {
    const npmSteps = of(build, "RUN").map((step) => step.args).filter((command) => command.startsWith("npm "))
    assert.deepStrictEqual(npmSteps, ["npm ci", "npm run build", "npm prune --omit=dev"])
    assert.match(read(".ci/run"), /^npm ci$/m, "CI installs with npm ci too")
    for (const step of npmSteps) {
      const script = /^npm run (\S+)/.exec(step)?.[1]
      if (script !== undefined) assert.property(packageJson.scripts, script, `npm run ${script} is a script of package.json`)
    }
  })

  it("runs as a non-root user with ./data as a volume, a health check on /healthz and a graceful stop signal", () => {
    const user = of(runtime, "USER")[0]?.args
    assert.isDefined(user)
    assert.notInclude(["root", "0"], user)
    assert.strictEqual(of(runtime, "WORKDIR").at(-1)?.args, "/app")
    assert.include(of(runtime, "VOLUME")[0]?.args, "/app/data")
    const env = of(runtime, "ENV").map((step) => step.args).join(" ")
    assert.match(env, /DATABASE_URL=sqlite:\.\/data\//)
    assert.match(env, /HEALTH_PORT=8080/)
    assert.include(of(runtime, "HEALTHCHECK")[0]?.args, "/healthz")
    assert.include(of(runtime, "EXPOSE")[0]?.args, "8080")
    assert.strictEqual(of(runtime, "STOPSIGNAL")[0]?.args, "SIGTERM")
  })

  it("the image's drain fits in docker stop's default 10 s (an image cannot set its stop timeout)", () => {
    const grace = /SHUTDOWN_GRACE_MS=(\d+)/.exec(of(runtime, "ENV").map((step) => step.args).join(" "))?.[1]
    assert.isDefined(grace, "the runtime stage sets SHUTDOWN_GRACE_MS")
    // What follows the grace (stop marks, logout, closing pools) took 0.8 s in the image smoke
    // test; 3 s are left for it on a busy host.
    assert.isAtMost(Number(grace), 7_000)
  })

  it("keeps only better-sqlite3's addon for the image's platform, not the others, its sources or SQLite's", () => {
    const steps = of(build, "RUN").map((step) => step.args).join("\n")
    assert.match(steps, /find prebuilds -type f ! -path "\$addon" -delete/)
    assert.match(steps, /rm -rf build deps src/)
  })

  it.live("the build step produces the entry the image runs, and it starts", () =>
    Effect.gen(function*() {
      const cmd = JSON.parse(of(runtime, "CMD").at(-1)?.args ?? "[]") as ReadonlyArray<string>
      assert.deepStrictEqual(cmd.slice(0, 1), ["node"])
      const built = yield* run("npm", ["run", "build", "--silent"])
      assert.strictEqual(built.code, 0, built.output)
      const started = yield* run(process.execPath, [...cmd.slice(1), "--version"])
      assert.strictEqual(started.code, 0, started.output)
      assert.match(started.output, /^loopcord \d+\.\d+\.\d+\n$/)
    }), 240_000)
})

describe("compose.yaml", () => {
  const compose = parseYaml(read("compose.yaml")) as {
    services: Record<string, { environment?: Record<string, string>; healthcheck?: { test: ReadonlyArray<string> }; profiles?: ReadonlyArray<string>; image?: string; build?: string; stop_grace_period?: string }>
  }

  it.effect("the bot, PostgreSQL, and an optional collector/Grafana profile; only variables that exist; the health endpoint", () =>
    Effect.gen(function*() {
      const bot = compose.services["bot"]
      assert.strictEqual(bot?.build, ".")
      assert.match(compose.services["postgres"]?.image ?? "", /^postgres:/)
      const observability = Object.values(compose.services).filter((service) => service.profiles?.includes("observability"))
      assert.isAtLeast(observability.length, 1)
      const known = new Set(yield* definedVariables)
      for (const name of Object.keys(bot?.environment ?? {})) assert.isTrue(known.has(name), `${name} is not a loopcord setting`)
      assert.match(bot?.environment?.["DATABASE_URL"] ?? "", /^postgres:\/\/[^@]+@postgres:5432\//)
      const healthPort = bot?.environment?.["HEALTH_PORT"]
      assert.include(bot?.healthcheck?.test.join(" "), `127.0.0.1:${healthPort}/healthz`)
      // Docker's stop timeout must outlast the drain.
      const grace = Number(bot?.environment?.["SHUTDOWN_GRACE_MS"] ?? "15000") / 1000
      assert.isAbove(Number.parseInt(bot?.stop_grace_period ?? "10", 10), grace)
    }))

  it("refuses to start without DISCORD_TOKEN, saying why, instead of restarting a bot that cannot run", () => {
    const token = compose.services["bot"]?.environment?.["DISCORD_TOKEN"] ?? ""
    assert.match(token, /^\$\{DISCORD_TOKEN:\?[^}]*DISCORD_TOKEN[^}]*\}$/)
  })

  it("the README names the Compose version that reads name: and env_file.required (2.24)", () => {
    assert.property(compose, "name")
    assert.match(read("README.md"), /Docker Compose 2\.24 or newer/)
    assert.match(read("compose.yaml"), /Docker Compose 2\.24 or newer/)
  })
})
