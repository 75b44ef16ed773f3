import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { assert, describe, it } from "@effect/vitest"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Duration, Effect } from "effect"
import { Agent } from "undici"
import * as UndiciHttpClient from "../../../src/provider/http/UndiciHttpClient"

/**
 * A response dropped before its body was read (an interrupt between the answer and the read)
 * is aborted when it is collected. The abort error its body then emits reaches no one: it must
 * not surface as an unhandled 'error' event, which would end the process.
 */

setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

/** A loopback server answering every request with `answer`; its sockets' closed flags. */
const server = (answer: (res: ServerResponse) => void) =>
  Effect.gen(function*() {
    const closed: Array<boolean> = []
    const http = createServer((_: IncomingMessage, res: ServerResponse) => answer(res))
    http.on("connection", (socket: Socket) => {
      const index = closed.push(false) - 1
      socket.on("close", () => (closed[index] = true))
    })
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))),
      () => Effect.promise(() => { http.closeAllConnections(); return new Promise<void>((resolve) => http.close(() => resolve())) })
    )
    return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, closed }
  })

/** Errors that reach the process while the scope is open. */
const uncaughtErrors = Effect.gen(function*() {
  const escaped: Array<string> = []
  const onUncaught = (error: unknown) => escaped.push(String(error))
  yield* Effect.acquireRelease(
    Effect.sync(() => process.prependListener("uncaughtException", onUncaught)),
    () => Effect.sync(() => process.off("uncaughtException", onUncaught))
  )
  return escaped
})

/** Executes one GET, looks only at the status, and drops the response; resolves once it was collected. */
const dropUnread = (url: string) =>
  Effect.gen(function*() {
    const agent = yield* Effect.acquireRelease(Effect.sync(() => new Agent()), (agent) => Effect.promise(() => agent.destroy()))
    let collected = false
    const watcher = new FinalizationRegistry<string>(() => (collected = true))
    const status = yield* Effect.map(UndiciHttpClient.make(agent).execute(HttpClientRequest.get(url)), (response) => {
      watcher.register(response, "response")
      return response.status
    })
    assert.strictEqual(status, 200)
    for (let round = 0; round < 200 && !collected; round++) {
      collectGarbage()
      yield* Effect.sleep(Duration.millis(10))
    }
    assert.isTrue(collected, "the dropped response was collected")
    // The abort's error event comes a tick or two after the body is destroyed.
    yield* Effect.sleep(Duration.millis(50))
  })

describe("UndiciResponse: a response dropped unread", () => {
  it.live("whose body arrived in full: its abort error escapes to no one", () =>
    Effect.gen(function*() {
      const srv = yield* server((res) => res.end("a short answer nobody reads"))
      const escaped = yield* uncaughtErrors
      yield* dropUnread(srv.url)
      assert.deepStrictEqual(escaped, [])
    }))

  it.live("whose body is still arriving: its socket closes, and no error escapes", () =>
    Effect.gen(function*() {
      const srv = yield* server((res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("a body nobody reads, never ended")
      })
      const escaped = yield* uncaughtErrors
      yield* dropUnread(srv.url)
      assert.deepStrictEqual(srv.closed, [true], "the dropped response's socket closes")
      assert.deepStrictEqual(escaped, [])
    }))
})
