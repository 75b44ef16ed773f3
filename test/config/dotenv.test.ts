import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer, Result } from "effect"
import fc from "fast-check"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dotenvLayer, parseDotenv, readDotenv, withDotenv } from "../../src/config/dotenv"

const parsed = (text: string) => Result.getOrThrow(parseDotenv(text))

describe("parseDotenv", () => {
  it("KEY=VALUE lines, comments, blank lines, export, quotes and inline comments", () => {
    const values = parsed([
      "# a comment",
      "",
      "LLM_PROVIDER=anthropic",
      "  export LLM_MODELS = claude-sonnet-4 , claude-haiku  ",
      "EMPTY=",
      "HASH=abc#def",
      "COMMENTED=value # the comment",
      "SINGLE='literal \\n $HOME # not a comment'",
      'DOUBLE="line one\\nline \\"two\\"" # trailing comment',
      "MCP_SERVERS='[{\"name\":\"docs\",\"url\":\"http://127.0.0.1:1/mcp\"}]'",
      "PEM=\"-----BEGIN-----",
      "abc",
      "-----END-----\"",
      "LLM_PROVIDER=openai-compatible"
    ].join("\r\n"))
    assert.deepStrictEqual(Object.fromEntries(values), {
      LLM_PROVIDER: "openai-compatible",
      LLM_MODELS: "claude-sonnet-4 , claude-haiku",
      EMPTY: "",
      HASH: "abc#def",
      COMMENTED: "value",
      SINGLE: "literal \\n $HOME # not a comment",
      DOUBLE: "line one\nline \"two\"",
      MCP_SERVERS: "[{\"name\":\"docs\",\"url\":\"http://127.0.0.1:1/mcp\"}]",
      PEM: "-----BEGIN-----\nabc\n-----END-----"
    })
  })

  it("an unparsable line is reported with its number and never its value", () => {
    const cases: ReadonlyArray<readonly [string, number, RegExp]> = [
      ["A=1\nthis line has no equals\n", 2, /expected KEY=VALUE/],
      ["A=1\n\n1BAD=x", 3, /not a variable name/],
      ["A=1\nB=\"never closed\nC=3\n", 2, /never closed/],
      ["A='x' y", 1, /after the closing quote/],
      ["=secret-value", 1, /not a variable name/]
    ]
    for (const [text, line, reason] of cases) {
      const result = parseDotenv(text)
      assert.isTrue(Result.isFailure(result), text)
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.line, line, text)
        assert.match(result.failure.reason, reason)
        assert.notInclude(result.failure.reason, "secret-value")
      }
    }
  })

  it("property: any set of values written double-quoted reads back as written", () => {
    const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/)
    fc.assert(fc.property(fc.dictionary(key, fc.string({ unit: "binary", maxLength: 40 }), { maxKeys: 8 }), (entries) => {
      const text = Object.entries(entries)
        .map(([name, value]) => `${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`)
        .join("\n")
      assert.deepStrictEqual(Object.fromEntries(parsed(text)), entries)
    }))
  })
})

describe("the .env of the working directory", () => {
  const withDirectory = (content: string | undefined) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const directory = await mkdtemp(join(tmpdir(), "loopcord-dotenv-"))
        if (content !== undefined) await writeFile(join(directory, ".env"), content)
        return directory
      }),
      (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
    )

  it.effect("missing: nothing; present: read; the real environment wins over it", () =>
    Effect.gen(function*() {
      const empty = yield* withDirectory(undefined)
      assert.strictEqual((yield* readDotenv(empty)).size, 0)
      const directory = yield* withDirectory("LOOPCORD_DOTENV_ONLY=from-file\nLOOPCORD_DOTENV_BOTH=from-file\n")
      const values = yield* readDotenv(directory)
      process.env["LOOPCORD_DOTENV_BOTH"] = "from-env"
      yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env["LOOPCORD_DOTENV_BOTH"]))
      const read = Config.all([Config.String("LOOPCORD_DOTENV_ONLY"), Config.String("LOOPCORD_DOTENV_BOTH")])
      assert.deepStrictEqual(yield* Effect.provideService(read, ConfigProvider.ConfigProvider, withDotenv(values)), ["from-file", "from-env"])
      const viaLayer = yield* read.pipe(Effect.provide(dotenvLayer(directory)))
      assert.deepStrictEqual(viaLayer, ["from-file", "from-env"])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("a variable set to the empty string is set: it reads as written, not as its default", () =>
    Effect.gen(function*() {
      const read = Config.String("LOOPCORD_DOTENV_EMPTY").pipe(Config.withDefault("the default"))
      assert.strictEqual(yield* Effect.provideService(read, ConfigProvider.ConfigProvider, withDotenv(new Map([["LOOPCORD_DOTENV_EMPTY", ""]]))), "")
      assert.strictEqual(yield* Effect.provideService(read, ConfigProvider.ConfigProvider, withDotenv(new Map())), "the default")
    }))

  it.effect("unparsable: one line naming the file and the line", () =>
    Effect.gen(function*() {
      const directory = yield* withDirectory("GOOD=1\nnot a setting\n")
      const error = yield* Effect.flip(Layer.build(dotenvLayer(directory)))
      assert.strictEqual(error.message, `${join(directory, ".env")} line 2: expected KEY=VALUE`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
