import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { makeCollectingSink } from "../../src/chat/CollectingSink"
import { LoopConfig } from "../../src/config/LoopConfig"
import { REPLY_CUT_MARKER } from "../../src/loop/passCaps"
import { makeQuietSink } from "../../src/loop/quietSink"
import { ResponseSink } from "../../src/loop/ResponseSink"
import { streamOnce } from "../../src/loop/streamOnce"
import { makeTurnSignals, TurnSignals } from "../../src/loop/TurnSignals"
import { makeDraftTurn } from "../../src/loop/drafting/DraftState"
import { holdingSink } from "../../src/loop/drafting/holdingSink"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { attempt, request } from "./harness"

/** A pass over a scripted model that writes `pieces` of 100 characters, into `sink`. */
const passInto = (sink: ResponseSink["Service"], pieces: number) =>
  Effect.gen(function*() {
    const signals = yield* makeTurnSignals("channel-1")
    const script: S.Script = [[...Array.from({ length: pieces }, () => S.text("x".repeat(100))), S.finish()]]
    return yield* Effect.gen(function*() {
      const pass = yield* streamOnce({ request: request(), attempt: attempt() })
      const [call] = yield* Effect.flatMap(ScriptedProbe, (probe) => probe.calls)
      return { pass, emitted: call?.emitted ?? 0 }
    }).pipe(Effect.provide(Layer.mergeAll(
      Scripted.layer({ script }),
      Layer.succeed(ResponseSink, sink),
      Layer.succeed(TurnSignals, signals),
      LoopConfig.make()
    )))
  })

describe("[issue 25] the sinks that wrap a front keep its capacity, so a pass into them is stopped there too", () => {
  it.effect("a quiet pass (NovelAI retry) withholds at most what the front could show", () =>
    Effect.gen(function*() {
      const front = yield* makeCollectingSink({ capacity: 1000 })
      const quiet = yield* makeQuietSink(front.sink)
      assert.strictEqual(quiet.sink.capacity, 1000)
      const { emitted } = yield* passInto(quiet.sink, 100)
      assert.strictEqual(yield* quiet.withheld, "x".repeat(1000) + REPLY_CUT_MARKER)
      assert.isAtMost(emitted, 12, "the stream was stopped just past the capacity")
    }))

  it.effect("a held pass (Response Drafting) holds at most what the front could show", () =>
    Effect.gen(function*() {
      const front = yield* makeCollectingSink({ capacity: 1000 })
      const held = holdingSink(yield* makeDraftTurn, front.sink)
      assert.strictEqual(held.capacity, 1000)
      const { emitted, pass } = yield* passInto(held, 100)
      assert.strictEqual(pass.accumulatedText, "x".repeat(1000) + REPLY_CUT_MARKER)
      assert.isAtMost(emitted, 12)
      assert.strictEqual(yield* front.delivered, "", "nothing reached the front while held")
    }))
})
