import { Effect, Layer, Ref } from "effect"
import { VisionConfig, type VisionSettings } from "../../../src/config/VisionConfig"
import type { ToolArgs } from "../../../src/domain/FunctionCall"
import { ImageLoader } from "../../../src/media/ImageLoader"
import { MediaLibrary } from "../../../src/media/MediaLibrary"
import { GuildToolSource } from "../../../src/tools/GuildToolSource"
import { type MediaOutlet, MediaDeliveryError, type OutgoingMedia } from "../../../src/tools/MediaOutlet"
import { OpaqueIds } from "../../../src/tools/OpaqueIds"
import type { Tool } from "../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../src/tools/ToolContext"
import { make as makeRegistry } from "../../../src/tools/ToolRegistry"
import { makeTurnState } from "../../../src/tools/TurnState"
import type { ChatMessage } from "../../../src/domain/ChatMessage"
import { webStack } from "../fakeWeb/webTestKit"
import { testToolContext } from "../tools/testToolContext"

/**
 * The media services a media tool runs on: the library (opaque ids), the image loader over the
 * real safe_http stack (loopback-only connector) and vision settings.
 */
export const mediaServices = (options: { readonly production?: boolean; readonly vision?: Partial<VisionSettings> } = {}) =>
  ImageLoader.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(
      webStack({ production: options.production ?? false }).layer,
      MediaLibrary.Default,
      VisionConfig.make(options.vision)
    )),
    Layer.provideMerge(MediaLibrary.opaqueIds.pipe(Layer.provide(MediaLibrary.Default)))
  )

/** An outlet that records what it was handed; `fail` makes every delivery fail. */
export const recordingOutlet = (options: { readonly fail?: string; readonly savedTo?: (media: OutgoingMedia) => string } = {}) =>
  Effect.map(Ref.make<ReadonlyArray<OutgoingMedia>>([]), (delivered) => {
    const outlet: MediaOutlet = {
      deliver: (media) =>
        options.fail !== undefined
          ? Effect.fail(new MediaDeliveryError({ detail: options.fail }))
          : Effect.as(Ref.update(delivered, (all) => [...all, media]), { savedTo: options.savedTo?.(media) ?? `/media/${media.filename}` })
    }
    return { outlet, delivered }
  })

/**
 * Calls `tool` the way the loop does: through a real registry (media_id resolved by the library)
 * under a fresh ToolContext whose turn has `outlet` and `contextItems`. Returns the result and
 * the progress notices.
 */
export const callMediaTool = (
  tool: Tool,
  args: ToolArgs,
  options: { readonly outlet?: MediaOutlet; readonly context?: Partial<ToolContextShape>; readonly contextItems?: ReadonlyArray<ChatMessage> } = {}
) =>
  Effect.gen(function*() {
    const registry = yield* makeRegistry.pipe(Effect.provide(GuildToolSource.none))
    yield* Effect.orDie(registry.register(tool))
    const turnState = yield* makeTurnState(options.contextItems ?? [], { mediaOutlet: options.outlet })
    const { context, progress } = yield* testToolContext({ turnState, ...options.context })
    const result = yield* registry.execute(tool.name, args).pipe(Effect.provideService(ToolContext, context))
    return { result, progress: yield* Ref.get(progress) }
  })

export type MediaServices = OpaqueIds | MediaLibrary | ImageLoader
