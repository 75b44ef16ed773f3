import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { fakeOtlp } from "../support/fakeOtlp"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

describe("OTEL_EXPORTER_OTLP_ENDPOINT through src/main.ts (child process)", () => {
  it.live("a --once turn's spans reach the collector before the process exits", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const run = yield* Effect.callback<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
        execFile(join(root, "node_modules", ".bin", "tsx"), ["src/main.ts", "--once", "hi", "--json"], {
          cwd: root,
          timeout: 90_000,
          env: {
            PATH: process.env["PATH"] ?? "",
            HOME: process.env["HOME"] ?? root,
            DATABASE_URL: "sqlite::memory:",
            LLM_PROVIDER: "scripted",
            OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
            OTEL_SERVICE_NAME: "loopcord-cli"
          }
        }, (error, stdout, stderr) =>
          resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })))
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(JSON.parse(run.stdout).status, "completed", "stdout still carries exactly the report")
      const turn = collector.spans.find((span) => span.name === "loopcord.turn")
      assert.isDefined(turn, JSON.stringify(collector.spans.map((span) => span.name)))
      assert.strictEqual(turn?.serviceName, "loopcord-cli")
      assert.isTrue(collector.spans.some((span) => span.name === "loopcord.pass" && span.traceId === turn?.traceId))
      assert.isTrue(collector.points.some((point) => point.metric === "loopcord_turns"), "metrics are flushed too")
    }), 120_000)
})
