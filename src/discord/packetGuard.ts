import type { Client } from "discord.js"
import { Effect, FiberSet, type Scope } from "effect"

type HandlePacket = (packet?: { readonly t?: unknown }, shard?: unknown) => boolean

/**
 * A gateway event discord.js cannot read (a field missing or of the wrong type: `author` a
 * string, no `channel_id`) makes its packet handler throw inside the WebSocket's message
 * callback: the error escapes as an unhandled rejection, which ends the process, and the shard
 * stops answering. Wrapped here, such an event is dropped and logged with its type only (never
 * its content), and every later event is handled as usual. discord.js's handler is internal
 * (`client.ws.handlePacket`), so it is looked up by name; without it nothing is wrapped.
 */
export const guardPacketHandling = (client: Client): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntime<never>()
    const manager: object = client.ws
    const original: unknown = Reflect.get(manager, "handlePacket")
    if (typeof original !== "function") {
      return yield* Effect.logWarning("Discord: discord.js has no packet handler to guard; malformed gateway events are not contained")
    }
    const handle = original as HandlePacket
    const guarded: HandlePacket = function(this: unknown, packet, shard) {
      try {
        return handle.call(this, packet, shard)
      } catch (error) {
        const type = typeof packet?.t === "string" ? packet.t.slice(0, 40) : "unknown"
        run(Effect.logWarning(`Discord: dropped a gateway event discord.js could not read (${type}): ${error instanceof Error ? error.name : "error"}`))
        return true
      }
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => Reflect.set(manager, "handlePacket", guarded)),
      () => Effect.sync(() => Reflect.set(manager, "handlePacket", original))
    )
  })
