import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import * as Statement from "effect/sql/Statement"
import { Effect, Layer, Ref, Stream } from "effect"
import { createConnection, createServer, type Server, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { SecretBox } from "../../src/store/SecretBox"
import * as Stores from "../../src/store/Stores"
import { testSecretKey } from "./stores"

/** What a database that never answers saw: statements sent to it and statements abandoned. */
export interface HangingDatabase {
  readonly started: Effect.Effect<number>
  readonly interrupted: Effect.Effect<number>
}

/**
 * A SqlClient whose database never answers: every statement is sent and then waits forever (as
 * behind a lock or a dead connection). Counts what was sent and what its caller gave up on.
 */
export const hangingSqlClient = Effect.gen(function*() {
  const started = yield* Ref.make(0)
  const interrupted = yield* Ref.make(0)
  const never = Effect.andThen(Ref.update(started, (n) => n + 1), Effect.never).pipe(
    Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1))
  )
  const connection: Connection = {
    execute: () => never,
    executeRaw: () => never,
    executeValues: () => never,
    executeValuesUnprepared: () => never,
    executeUnprepared: () => never,
    executeStream: () => Stream.fromEffect(never)
  }
  const client = yield* SqlClient.make({
    acquirer: Effect.succeed(connection),
    compiler: Statement.makeCompilerSqlite(),
    driver: "hanging",
    spanAttributes: []
  })
  const database: HangingDatabase = { started: Ref.get(started), interrupted: Ref.get(interrupted) }
  return { client, database }
}).pipe(Effect.provide(Reactivity.layer))

/** Every store over a database that never answers, with what it saw. */
export const storesOnHangingDatabase = Effect.map(hangingSqlClient, ({ client, database }) => ({
  database,
  layer: Stores.layerOnClient.pipe(Layer.provide(Layer.merge(Layer.succeed(SqlClient.SqlClient, client), SecretBox.make({ current: testSecretKey }))))
}))

/** A loopback TCP proxy in front of a real database that can stop forwarding: a network that went dead. */
export interface FreezingProxy {
  readonly port: number
  /** From now on nothing is forwarded either way (held, not dropped); new connections hang too. */
  readonly freeze: Effect.Effect<void>
  /** Delivers what was held and forwards again. */
  readonly thaw: Effect.Effect<void>
}

interface Pipe {
  readonly from: Socket
  readonly to: Socket
  readonly held: Array<Buffer>
}

export const freezingProxy = (target: { readonly host: string; readonly port: number }) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly proxy: FreezingProxy; readonly server: Server; readonly sockets: Set<Socket> }>((resume) => {
      let frozen = false
      const pipes: Array<Pipe> = []
      const sockets = new Set<Socket>()
      const track = (socket: Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => socket.destroy())
      }
      const forward = (pipe: Pipe) =>
        pipe.from.on("data", (chunk: Buffer) => {
          if (frozen) pipe.held.push(chunk)
          else pipe.to.write(chunk)
        })
      const server = createServer((client) => {
        const upstream = createConnection(target)
        track(client)
        track(upstream)
        client.on("close", () => upstream.destroy())
        upstream.on("close", () => client.destroy())
        const up: Pipe = { from: client, to: upstream, held: [] }
        const down: Pipe = { from: upstream, to: client, held: [] }
        pipes.push(up, down)
        forward(up)
        forward(down)
      })
      const proxy = (port: number): FreezingProxy => ({
        port,
        freeze: Effect.sync(() => {
          frozen = true
        }),
        thaw: Effect.sync(() => {
          frozen = false
          for (const pipe of pipes) {
            for (const chunk of pipe.held.splice(0)) pipe.to.write(chunk)
          }
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ proxy: proxy((server.address() as AddressInfo).port), server, sockets })))
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ proxy }) => proxy))
