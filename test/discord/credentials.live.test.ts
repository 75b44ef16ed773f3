import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { execFile } from "node:child_process"
import { readdir, readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { GuildMcpRegistry } from "../../src/mcp/GuildMcpRegistry"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { reply } from "../../src/provider/scripted/Script"
import { DatabaseTarget } from "../../src/config/DatabaseUrl"
import { EnabledChannelStore } from "../../src/store/EnabledChannelStore"
import { SecretBox } from "../../src/store/SecretBox"
import * as Stores from "../../src/store/Stores"
import { Permission, waitUntil } from "../support/fakeDiscord"
import { fakeLlmServer, type FakeLlmServer, jsonResponse, type RecordedRequest } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"
import { makeLogCapture } from "../support/tools/logCapture"
import { postgres, sqliteFile } from "../store/databases"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Who pays for a turn, end to end (issue 17): a real discord.js client on the fake Discord, the
 * real OpenAI-compatible provider against the loopback fake LLM server, the real stores.
 */

const PERSONAL = "sk-personal-e2e-51c0ffee"
const SERVER = "sk-server-e2e-7d15ea5e"
const MCP_HEADER = "Bearer mcp-e2e-0bad1dea"
const OPERATOR = "sk-operator-e2e-9a9a9a9a"

const authorization = (request: RecordedRequest) => String(request.headers["authorization"] ?? "")

/** The fake provider answers with the key it was called with, and refuses the keys in `refused` (401, OpenAI's envelope). */
const keyEchoingProvider = (refused: Set<string>) =>
  (request: RecordedRequest) => {
    const key = authorization(request).replace(/^Bearer /, "")
    return refused.has(key)
      ? jsonResponse(401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } })
      : openAiStream([textChunk(`Answered on the ${key === PERSONAL ? "personal" : key === SERVER ? "server" : "operator"} key.`), finishChunk("stop"), usageChunk(12, 5)])
  }

const openAiModel = (server: FakeLlmServer) => OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }).pipe(Layer.provide(providerHttpClient()))

const commandAnswer = (fake: Parameters<typeof waitUntil>[0], interaction: { readonly original: { readonly content: string } | undefined }, what: string) =>
  Effect.map(waitUntil(fake, what, () => interaction.original !== undefined), () => interaction.original?.content ?? "")

describe("/key on the fake Discord, the keys on the wire (issue 17)", () => {
  it.live("after /key personal a mention reaches the provider with that key; when the provider refuses it the server key answers and the user is told by DM", () =>
    Effect.gen(function*() {
      const refused = new Set<string>()
      const server = yield* fakeLlmServer({ handler: keyEchoingProvider(refused) })
      const { fake } = yield* botHarness({
        script: () => reply("unused"),
        model: openAiModel(server),
        routePlan: { models: ["gpt-test"], keys: [OPERATOR] }
      })
      const alice = fake.user("alice")
      // A member who is not an admin cannot set the server's key.
      const denied = yield* commandAnswer(fake, fake.slash("key", { subcommand: "server", options: { value: SERVER }, user: alice }), "/key server denied")
      assert.include(denied, "Manage Server")
      const admin = fake.user("admin")
      const setServer = fake.slash("key", { subcommand: "server", options: { value: SERVER }, user: admin, permissions: Permission.ManageGuild })
      assert.include(yield* commandAnswer(fake, setServer, "/key server"), "This server's API key is saved")
      // Malformed values are refused and never echoed.
      const malformed = yield* commandAnswer(fake, fake.slash("key", { subcommand: "personal", options: { value: "Bearer nope nope" }, user: alice }), "malformed")
      assert.include(malformed, "That is not an API key")
      assert.notInclude(malformed, "nope")

      // No personal key yet: the server's key answers.
      fake.userSays(fake.channel, "who pays?", { mentionBot: true, author: alice })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer on the server key", ([content]) => content === "Answered on the server key.")
      assert.strictEqual(authorization(server.requests[0]!), `Bearer ${SERVER}`)

      const setPersonal = fake.slash("key", { subcommand: "personal", options: { value: PERSONAL }, user: alice })
      const saved = yield* commandAnswer(fake, setPersonal, "/key personal")
      assert.include(saved, "Your personal API key is saved")
      assert.notInclude(saved, PERSONAL)
      // Private: deferred as ephemeral, and nothing of the key in any message the bot posted.
      assert.strictEqual((Number((setPersonal.callbacks[0]?.["data"] as { flags?: number } | undefined)?.flags ?? 0) & 64), 64)
      assert.isFalse(fake.requests.some((request) => JSON.stringify(request.body ?? {}).includes(PERSONAL)))

      fake.userSays(fake.channel, "and now?", { mentionBot: true, author: alice })
      yield* awaitBotMessages(fake, fake.channel.id, 2, "the answer on the personal key", (contents) => contents[1] === "Answered on the personal key.")
      assert.strictEqual(authorization(server.requests[1]!), `Bearer ${PERSONAL}`)

      // The provider now refuses the personal key: the server's key answers next, and alice hears of it privately.
      refused.add(PERSONAL)
      fake.userSays(fake.channel, "still there?", { mentionBot: true, author: alice })
      yield* awaitBotMessages(fake, fake.channel.id, 3, "the answer on the server key after the refusal", (contents) => contents.some((content) => content === "Answered on the server key." ) && contents.length >= 3)
      assert.deepStrictEqual(server.requests.slice(2).map(authorization), [`Bearer ${PERSONAL}`, `Bearer ${SERVER}`])
      const dm = fake.dmChannel(alice)
      yield* waitUntil(fake, "the DM to alice", () => fake.botMessages(dm.id).length > 0)
      const told = fake.botMessages(dm.id).map((message) => message.content).join("\n")
      assert.include(told, "refused your personal API key (HTTP 401)")
      assert.notInclude(told, PERSONAL)
      // In the channel: the answer and a fallback notice, nothing about the key itself.
      for (const message of fake.botMessages(fake.channel.id)) assert.notInclude(JSON.stringify(message), PERSONAL)

      // /key optout: the next refusal is not rescued by the server's key.
      assert.include(yield* commandAnswer(fake, fake.slash("key", { subcommand: "optout", user: alice }), "/key optout"), "will not answer for you")
      const before = server.requests.length
      fake.userSays(fake.channel, "opted out now", { mentionBot: true, author: alice })
      yield* waitUntil(fake, "the error notice", () => fake.botMessages(fake.channel.id).some((message) => JSON.stringify(message).includes("could not answer")))
      assert.deepStrictEqual(server.requests.slice(before).map(authorization), [`Bearer ${PERSONAL}`])

      // /key status names what is set, never a value; /usage counts the turns by source.
      const status = yield* commandAnswer(fake, fake.slash("key", { subcommand: "status", user: alice }), "/key status")
      assert.include(status, "Your personal key: set")
      assert.include(status, "This server's key: set")
      assert.notInclude(status, PERSONAL)
      const usage = yield* commandAnswer(fake, fake.slash("usage", { user: alice }), "/usage")
      assert.include(usage, "Your usage")
      // On the server key: the first turn and the rescued one (17 tokens each); on her own: one answer (17) and the opted-out failure (0).
      assert.include(usage, "Last 7 days: 4 turns, 51 tokens (own key 2 / 17 · server key 2 / 34)")
      const serverUsage = yield* commandAnswer(fake, fake.slash("usage", { user: admin, options: { scope: "server" }, permissions: Permission.ManageGuild }), "/usage server")
      assert.include(serverUsage, "This server's usage")
      assert.include(yield* commandAnswer(fake, fake.slash("usage", { user: alice, options: { scope: "server" } }), "/usage server denied"), "Manage Server")

      // /key clear removes it: the server's key answers again without trying the personal one.
      assert.include(yield* commandAnswer(fake, fake.slash("key", { subcommand: "clear", options: { scope: "personal" }, user: alice }), "/key clear"), "removed")
      const afterClear = server.requests.length
      fake.userSays(fake.channel, "cleared", { mentionBot: true, author: alice })
      yield* waitUntil(fake, "the answer after /key clear", () => server.requests.length > afterClear && fake.botMessages(fake.channel.id).filter((message) => message.content === "Answered on the server key.").length >= 3)
      assert.deepStrictEqual(server.requests.slice(afterClear).map(authorization), [`Bearer ${SERVER}`])
    }), 60_000)

  it.live("without LOOPCORD_SECRET_KEY a key is refused with a clear message to the user and a log line", () =>
    Effect.gen(function*() {
      const logs = yield* makeLogCapture
      const { fake } = yield* logs.capture(botHarness({
        script: () => reply("ok"),
        stores: Stores.layer(DatabaseTarget.SqliteMemory(), SecretBox.unkeyed)
      }))
      const answer = yield* commandAnswer(fake, fake.slash("key", { subcommand: "personal", options: { value: PERSONAL } }), "/key personal")
      assert.include(answer, "its operator has not set LOOPCORD_SECRET_KEY")
      assert.notInclude(answer, PERSONAL)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.strictEqual((yield* logs.matching("refused to store a personal API key: LOOPCORD_SECRET_KEY is not set")).length, 1)
      assert.notInclude(JSON.stringify(yield* logs.logs), PERSONAL)
    }), 30_000)
})

const secretKey = new Uint8Array(32).map((_, index) => (index * 37 + 11) % 256)
const SECRETS = [PERSONAL, SERVER, MCP_HEADER.slice("Bearer ".length)]
const CANARY = "plain-text-canary-4f2a"

/** Which of `needles` occur anywhere in `haystack` (as UTF-8 bytes). */
const found = (haystack: Buffer, needles: ReadonlyArray<string>) => needles.filter((needle) => haystack.includes(Buffer.from(needle, "utf8")))

const pgDump = (url: string) =>
  Effect.callback<Buffer, Error>((resume) => {
    const parsed = new URL(url)
    const schema = decodeURIComponent(parsed.searchParams.get("options") ?? "").replace(/^-c search_path=/, "")
    parsed.search = ""
    execFile("pg_dump", ["--dbname", parsed.toString(), "--schema", schema], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resume(error === null ? Effect.succeed(stdout) : Effect.fail(new Error(`pg_dump failed: ${error.message} ${stderr.toString()}`))))
  })

for (const database of [sqliteFile, postgres]) {
  describe(`secrets at rest on ${database.name}`, () => {
    it.live("after /key personal, /key server and a guild MCP server with a header, no key or header value is in the database in plain text", () =>
      Effect.gen(function*() {
        const target = yield* database.target
        const server = yield* fakeLlmServer({ handler: keyEchoingProvider(new Set()) })
        const { fake, context } = yield* botHarness({
          script: () => reply("unused"),
          model: openAiModel(server),
          routePlan: { models: ["gpt-test"] },
          stores: Stores.layer(target, SecretBox.make({ current: secretKey }))
        })
        const alice = fake.user("alice")
        yield* commandAnswer(fake, fake.slash("key", { subcommand: "server", options: { value: SERVER }, permissions: Permission.ManageGuild }), "/key server")
        yield* commandAnswer(fake, fake.slash("key", { subcommand: "personal", options: { value: PERSONAL }, user: alice }), "/key personal")
        yield* Effect.flatMap(GuildMcpRegistry, (registry) =>
          registry.add({ guildId: fake.guild.id, name: "search", url: "https://mcp.example.com/mcp", type: "generic", enabled: true, headers: { Authorization: MCP_HEADER }, addedBy: "admin", addedAt: 1 })).pipe(
          Effect.provide(context)
        )
        // The keys are usable (stored and opened): the personal one reaches the provider.
        fake.userSays(fake.channel, "which key?", { mentionBot: true, author: alice })
        yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", ([content]) => content === "Answered on the personal key.")
        assert.strictEqual(authorization(server.requests[0]!), `Bearer ${PERSONAL}`)
        // A plain-text canary written through the same database proves the search sees stored text.
        yield* Effect.flatMap(EnabledChannelStore, (store) => store.enable(CANARY, fake.channel.id)).pipe(Effect.provide(context))
        let bytes: Buffer
        if (target._tag === "SqliteFile") {
          const directory = dirname(target.path)
          const files = (yield* Effect.promise(() => readdir(directory))).filter((name) => name.startsWith("loopcord.db"))
          bytes = Buffer.concat(yield* Effect.promise(() => Promise.all(files.map((name) => readFile(join(directory, name))))))
        } else if (target._tag === "Postgres") {
          bytes = yield* pgDump(Redacted.value(target.url))
        } else {
          return assert.fail("a file or PostgreSQL database")
        }
        assert.deepStrictEqual(found(bytes, SECRETS), [], "no secret in plain text")
        assert.deepStrictEqual(found(bytes, [CANARY, "lcs1."]), [CANARY, "lcs1."], "the search sees stored text, and the sealed values are there")
      }), 60_000)
  })
}
