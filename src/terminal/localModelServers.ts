import { Deferred, Duration, Effect, Fiber, Option, Schema } from "effect"
import { get as httpGet } from "node:http"

/**
 * The model servers people run on their own machine, found on loopback without any setting:
 * Ollama (11434), LM Studio (1234), llama.cpp's server (8080). Each speaks the OpenAI API under
 * `/v1`; each is asked which models it has, the loaded one first.
 */

type LocalServerKind = "ollama" | "lmstudio" | "llamacpp"

export interface LocalServerCandidate {
  readonly kind: LocalServerKind
  readonly port: number
}

export interface FoundServer {
  readonly kind: LocalServerKind
  /** `Ollama`, `LM Studio`, `llama.cpp`. */
  readonly label: string
  /** `http://127.0.0.1:PORT` */
  readonly origin: string
  /** Loaded model first; never empty. */
  readonly models: ReadonlyArray<string>
}

const LOCAL_SERVER_LABELS: Readonly<Record<LocalServerKind, string>> = {
  ollama: "Ollama",
  lmstudio: "LM Studio",
  llamacpp: "llama.cpp"
}

/** In the order they are preferred when several answer. */
export const DEFAULT_LOCAL_SERVERS: ReadonlyArray<LocalServerCandidate> = [
  { kind: "ollama", port: 11434 },
  { kind: "lmstudio", port: 1234 },
  { kind: "llamacpp", port: 8080 }
]

/** Every probe together, answers included, takes at most this long. */
const PROBE_BUDGET = Duration.millis(500)
/** A model list is small; a server that sends more is not one of these. */
const MAX_BODY_BYTES = 256 * 1024
/** Models offered at most (the rest of a huge local library is not listed). */
const MAX_MODELS = 50

const OllamaModels = Schema.Struct({ models: Schema.Array(Schema.Struct({ name: Schema.String })) })
const OpenAiModels = Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String })) })
const LmStudioModels = Schema.Struct({ data: Schema.Array(Schema.Struct({ id: Schema.String, state: Schema.optional(Schema.String) })) })

/**
 * GET a small JSON document from loopback; interrupting the effect aborts the request. Plain
 * node:http, not `fetch`: a first start would otherwise pay for initialising undici's fetch.
 */
const getJson = (origin: string, path: string): Effect.Effect<unknown, Error> =>
  Effect.callback<unknown, Error>((resume, signal) => {
    const request = httpGet(`${origin}${path}`, { signal, headers: { accept: "application/json" } }, (response) => {
      if (response.statusCode !== 200) {
        response.resume()
        return resume(Effect.fail(new Error(`HTTP ${response.statusCode}`)))
      }
      const parts: Array<Buffer> = []
      let size = 0
      response.on("data", (part: Buffer) => {
        size += part.length
        if (size > MAX_BODY_BYTES) {
          response.destroy()
          return resume(Effect.fail(new Error("body too large")))
        }
        parts.push(part)
      })
      response.on("error", (error) => resume(Effect.fail(error)))
      response.on("end", () => resume(Effect.try({ try: (): unknown => JSON.parse(Buffer.concat(parts).toString("utf8")), catch: () => new Error("not JSON") })))
    })
    request.on("error", (error) => resume(Effect.fail(error)))
  })

const decode = <A>(schema: Schema.Decoder<A>) => (value: unknown) => Effect.mapError(Schema.decodeUnknownEffect(schema)(value), () => new Error("not a model list"))

/** A plausible model name: what `LLM_MODELS` would accept. */
const usable = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...new Set(names.map((name) => name.trim()).filter((name) => name.length > 0 && name.length <= 200 && /^[^\s,]+$/.test(name)))].slice(0, MAX_MODELS)

/** The models a server has, loaded first; fails when it is not that kind of server (or has none). */
const modelsOf = (candidate: LocalServerCandidate, origin: string): Effect.Effect<ReadonlyArray<string>, Error> => {
  switch (candidate.kind) {
    case "ollama":
      return Effect.gen(function*() {
        const [loaded, all] = yield* Effect.all([
          Effect.flatMap(getJson(origin, "/api/ps"), decode(OllamaModels)).pipe(Effect.orElseSucceed(() => ({ models: [] }))),
          Effect.flatMap(getJson(origin, "/api/tags"), decode(OllamaModels))
        ], { concurrency: 2 })
        return usable([...loaded.models, ...all.models].map((model) => model.name))
      })
    case "lmstudio":
      return Effect.flatMap(getJson(origin, "/api/v0/models"), decode(LmStudioModels)).pipe(
        Effect.map(({ data }) => usable([...data.filter((model) => model.state === "loaded"), ...data].map((model) => model.id))),
        Effect.catch(() => Effect.map(Effect.flatMap(getJson(origin, "/v1/models"), decode(OpenAiModels)), ({ data }) => usable(data.map((model) => model.id))))
      )
    case "llamacpp":
      return Effect.map(Effect.flatMap(getJson(origin, "/v1/models"), decode(OpenAiModels)), ({ data }) => usable(data.map((model) => model.id)))
  }
}

const probeOne = (candidate: LocalServerCandidate): Effect.Effect<Option.Option<FoundServer>> => {
  const origin = `http://127.0.0.1:${candidate.port}`
  return modelsOf(candidate, origin).pipe(
    Effect.map((models) => (models.length === 0 ? Option.none() : Option.some({ kind: candidate.kind, label: LOCAL_SERVER_LABELS[candidate.kind], origin, models }))),
    Effect.orElseSucceed(() => Option.none<FoundServer>())
  )
}

/**
 * The first of `candidates` (in their order of preference) that answers with a model list, all
 * asked at once and every answer within `budget` on the Effect Clock. A refused port answers at
 * once, so with nothing running this takes a few milliseconds; a port that accepts and stays
 * silent costs the budget, never more. Only 127.0.0.1 is ever asked.
 */
export const probeLocalServers = (
  candidates: ReadonlyArray<LocalServerCandidate> = DEFAULT_LOCAL_SERVERS,
  budget: Duration.Input = PROBE_BUDGET
): Effect.Effect<Option.Option<FoundServer>> =>
  Effect.scoped(Effect.gen(function*() {
    const answers = yield* Effect.forEach(candidates, (candidate) =>
      Effect.map(Deferred.make<Option.Option<FoundServer>>(), (answer) => ({ candidate, answer })))
    const probes = yield* Effect.forEach(answers, ({ answer, candidate }) =>
      Effect.forkScoped(Effect.flatMap(probeOne(candidate), (found) => Deferred.succeed(answer, found))))
    // The most preferred answer wins: wait on each in order, all under one deadline.
    const inOrder = Effect.gen(function*() {
      for (const { answer } of answers) {
        const found = yield* Deferred.await(answer)
        if (Option.isSome(found)) return found
      }
      return Option.none<FoundServer>()
    })
    const found = yield* inOrder.pipe(Effect.timeout(budget), Effect.orElseSucceed(() => Option.none<FoundServer>()))
    yield* Fiber.interruptAll(probes)
    return found
  }))

/**
 * `LOOPCORD_LOCAL_MODEL_SERVERS` (internal, for tests): `ollama=PORT,lmstudio=PORT,llamacpp=PORT`,
 * any subset, always on 127.0.0.1, so tests never ask the real ports. Undefined: not a list.
 */
export const parseLocalServerList = (raw: string): ReadonlyArray<LocalServerCandidate> | undefined => {
  const entries = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  const parsed = entries.map((entry): LocalServerCandidate | undefined => {
    const [kind, port] = entry.split("=")
    const number = Number(port)
    return (kind === "ollama" || kind === "lmstudio" || kind === "llamacpp") && Number.isInteger(number) && number > 0 && number < 65536
      ? { kind, port: number }
      : undefined
  })
  return parsed.every((entry) => entry !== undefined) ? parsed.filter((entry) => entry !== undefined) : undefined
}
