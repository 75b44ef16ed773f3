import { type Client, type CloseEvent, Events } from "discord.js"
import { Effect, FiberSet, type Scope } from "effect"

/**
 * Logs what happens to the gateway connection after login: a shard that drops,
 * reconnects, resumes (with the events replayed), gets a new session, or errs, and the
 * client's own errors and warnings. discord.js reconnects by itself; these lines say it did.
 * The listeners stay for the scope.
 */
export const logGatewayEvents = (client: Client): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntime<never>()
    const annotated = (shardId: number) => (effect: Effect.Effect<void>) => run(Effect.annotateLogs(effect, { shardId }))
    const listeners = {
      [Events.ShardDisconnect]: (event: CloseEvent, shardId: number) =>
        // discord.js emits this only for a close it will not reconnect after (bad token, intents …).
        annotated(shardId)(Effect.logError(`Discord gateway: shard ${shardId} disconnected (close ${event.code}) and will not reconnect`)),
      [Events.ShardReconnecting]: (shardId: number) => annotated(shardId)(Effect.logInfo(`Discord gateway: shard ${shardId} reconnecting`)),
      [Events.ShardResume]: (shardId: number, replayed: number) =>
        annotated(shardId)(Effect.logInfo(`Discord gateway: shard ${shardId} resumed (${replayed} events replayed)`)),
      [Events.ShardReady]: (shardId: number) => annotated(shardId)(Effect.logInfo(`Discord gateway: shard ${shardId} ready (new session)`)),
      [Events.ShardError]: (error: Error, shardId: number) =>
        annotated(shardId)(Effect.logError(`Discord gateway: shard ${shardId} error: ${error.message}`)),
      [Events.Invalidated]: () => run(Effect.logError("Discord gateway: the session was invalidated; the client stops")),
      [Events.Error]: (error: Error) => run(Effect.logError(`Discord client error: ${error.message}`)),
      [Events.Warn]: (message: string) => run(Effect.logWarning(`Discord client warning: ${message}`))
    }
    client.on(Events.ShardDisconnect, listeners[Events.ShardDisconnect])
    client.on(Events.ShardReconnecting, listeners[Events.ShardReconnecting])
    client.on(Events.ShardResume, listeners[Events.ShardResume])
    client.on(Events.ShardReady, listeners[Events.ShardReady])
    client.on(Events.ShardError, listeners[Events.ShardError])
    client.on(Events.Invalidated, listeners[Events.Invalidated])
    client.on(Events.Error, listeners[Events.Error])
    client.on(Events.Warn, listeners[Events.Warn])
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        client.off(Events.ShardDisconnect, listeners[Events.ShardDisconnect])
        client.off(Events.ShardReconnecting, listeners[Events.ShardReconnecting])
        client.off(Events.ShardResume, listeners[Events.ShardResume])
        client.off(Events.ShardReady, listeners[Events.ShardReady])
        client.off(Events.ShardError, listeners[Events.ShardError])
        client.off(Events.Invalidated, listeners[Events.Invalidated])
        client.off(Events.Error, listeners[Events.Error])
        client.off(Events.Warn, listeners[Events.Warn])
      })
    )
  })
