import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { thrownMessage } from "../../src/domain/thrownMessage"

describe("thrownMessage", () => {
  it.effect("names what the promise threw, not the wrapper's generic text", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(Effect.tryPromise(() => Promise.reject(new Error("Missing Access"))))
      assert.strictEqual(thrownMessage(failure), "Missing Access")
    }))

  it.effect("a thrown value that is no Error is shown as text", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(Effect.tryPromise(() => Promise.reject("socket hang up")))
      assert.strictEqual(thrownMessage(failure), "socket hang up")
    }))
})
