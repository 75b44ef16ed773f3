import * as FileSystem from "effect/FileSystem"
import { Cause, type Config, Context, Deferred, Effect, Exit, Filter, Layer, Option, Ref, Result, Stream, SynchronizedRef } from "effect"
import { scriptSourceSetting } from "../../config/ProviderConfig"
import { invalidSetting } from "../../config/settingError"
import { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { GenerationRequest } from "../GenerationRequest"
import { LanguageModel } from "../LanguageModel"
import { type Script, type ScriptedPass, ScriptStep } from "./Script"
import { echoScript, parseScript } from "./ScriptJson"
import { type PassEnding, type ScriptedCallRecord, ScriptedProbe } from "./ScriptedProbe"

interface ScriptedOptions {
  readonly script: Script
  /** Provider family name tools see (`LanguageModel.name`); `scripted` by default. */
  readonly name?: string
}

interface CallSlot {
  readonly started: Deferred.Deferred<void>
  readonly finalized: Deferred.Deferred<PassEnding>
}

const pickPass = (script: Script, index: number, modelIndex: number, request: GenerationRequest): ScriptedPass | undefined =>
  typeof script === "function" ? script({ index, modelIndex, request }) : script[index]

/**
 * A LanguageModel that replays passes given as data. Every timer runs on the Clock, so
 * TestClock drives delays and hangs; every stream records its request and how it ended
 * (its finalizer runs on completion, abandonment and interruption alike).
 */
const make = (options: ScriptedOptions) =>
  Effect.gen(function*() {
    const name = options.name ?? "scripted"
    const counter = yield* Ref.make(0)
    const perModel = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
    const records = yield* Ref.make<ReadonlyArray<ScriptedCallRecord>>([])
    const slots = yield* SynchronizedRef.make<ReadonlyMap<number, CallSlot>>(new Map())

    const slotFor = (index: number) =>
      SynchronizedRef.modifyEffect(slots, (current) => {
        const existing = current.get(index)
        if (existing !== undefined) return Effect.succeed([existing, current] as const)
        return Effect.map(
          Effect.all({ started: Deferred.make<void>(), finalized: Deferred.make<PassEnding>() }),
          (slot) => [slot, new Map(current).set(index, slot)] as const
        )
      })

    const updateRecord = (index: number, f: (record: ScriptedCallRecord) => ScriptedCallRecord) =>
      Ref.update(records, (all) => all.map((record) => (record.index === index ? f(record) : record)))

    const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
      Stream.unwrap(Effect.gen(function*() {
        const index = yield* Ref.getAndUpdate(counter, (n) => n + 1)
        const slot = yield* slotFor(index)
        const state = yield* Ref.make<"running" | "completed" | "failed">("running")
        yield* Ref.update(records, (all) => [...all, { index, request, ending: undefined, emitted: 0 }])
        yield* Effect.addFinalizer((exit) =>
          Effect.gen(function*() {
            const reached = yield* Ref.get(state)
            const ending: PassEnding = reached !== "running"
              ? reached
              : Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)
              ? "interrupted"
              : "abandoned"
            yield* updateRecord(index, (record) => ({ ...record, ending }))
            yield* Deferred.succeed(slot.finalized, ending)
          })
        )
        yield* Deferred.succeed(slot.started, undefined)

        const modelIndex = yield* Ref.modify(perModel, (counts) => {
          const next = counts.get(request.model) ?? 0
          return [next, new Map(counts).set(request.model, next + 1)]
        })
        const pass = pickPass(options.script, index, modelIndex, request)
        if (pass === undefined) {
          yield* Ref.set(state, "failed")
          return Stream.fail(
            new ProviderError({ reason: "InvalidResponse", provider: name, detail: `script exhausted: it has no pass #${index + 1}` })
          )
        }

        const runStep = (step: ScriptStep): Effect.Effect<Option.Option<ProviderEvent>, ProviderError> =>
          ScriptStep.$match(step, {
            Emit: ({ event }) =>
              Effect.as(updateRecord(index, (record) => ({ ...record, emitted: record.emitted + 1 })), Option.some(event)),
            Sleep: ({ duration }) => Effect.as(Effect.sleep(duration), Option.none()),
            Fail: ({ error }) => Effect.andThen(Ref.set(state, "failed"), Effect.fail(error)),
            Hang: () => Effect.never
          })

        return Stream.fromIterable(pass).pipe(
          Stream.mapEffect(runStep),
          Stream.filterMap(Filter.fromPredicateOption((event: Option.Option<ProviderEvent>) => event)),
          Stream.concat(Stream.fromEffectDrain(Ref.set(state, "completed")))
        )
      }))

    const model: LanguageModel["Service"] = { name, stream }
    const probe: ScriptedProbe["Service"] = {
      requests: Effect.map(Ref.get(records), (all) => all.map((record) => record.request)),
      calls: Ref.get(records),
      awaitCall: (index) => Effect.flatMap(slotFor(index), (slot) => Deferred.await(slot.started)),
      awaitFinalized: (index) => Effect.flatMap(slotFor(index), (slot) => Deferred.await(slot.finalized))
    }
    return { model, probe }
  })

/** The scripted model and its probe as one Layer (tests read the probe to assert on requests). */
export const layer = (options: ScriptedOptions): Layer.Layer<LanguageModel | ScriptedProbe> =>
  Layer.effectContext(
    Effect.map(make(options), ({ model, probe }) => Context.make(LanguageModel, model).pipe(Context.add(ScriptedProbe, probe)))
  )

const scriptError = (detail: string) => invalidSetting("LLM_SCRIPT", detail)

/**
 * `LLM_PROVIDER=scripted`: the script comes from `LLM_SCRIPT`, inline JSON (starting with `[` or
 * `{`) or a path to a JSON file (see ScriptJson.ts for the format). Unset: every pass answers
 * with the built-in echo reply. A bad script fails start-up with an error naming LLM_SCRIPT.
 */
export const layerConfig: Layer.Layer<LanguageModel | ScriptedProbe, Config.ConfigError, FileSystem.FileSystem> = Layer
  .unwrap(Effect.gen(function*() {
    const source = yield* scriptSourceSetting
    if (Option.isNone(source)) return layer({ script: echoScript })
    const raw = source.value.trim()
    const json = raw.startsWith("[") || raw.startsWith("{")
      ? raw
      : yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(raw)).pipe(
        Effect.mapError((error) => scriptError(`cannot read script file ${raw}: ${error.message}`))
      )
    const script = yield* Result.match(parseScript(json), {
      onFailure: (detail) => Effect.fail(scriptError(detail)),
      onSuccess: (parsed) => Effect.succeed(parsed)
    })
    return layer({ script })
  }))
