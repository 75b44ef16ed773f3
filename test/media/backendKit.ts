import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { ComfyWorkflowJson } from "../../src/config/ImageConfig"
import { ImageConfig, type ImageSettings } from "../../src/config/ImageConfig"
import { SpeechConfig, type SpeechSettings } from "../../src/config/SpeechConfig"
import * as ComfyUi from "../../src/media/image/ComfyUi"
import { ImageBackend } from "../../src/media/image/ImageBackend"
import * as OpenAiImages from "../../src/media/image/OpenAiImages"
import * as OpenAiSpeech from "../../src/media/speech/OpenAiSpeech"
import { SpeechBackend } from "../../src/media/speech/SpeechBackend"
import { type WebKitOptions, webStack } from "../support/fakeWeb/webTestKit"

/** The platform's undici HttpClient, as the app gives the media backends. */
export const httpClient = NodeHttpClient.layerUndici

/** The service of `layer`, built in the current scope (its HTTP client lives as long). */
const service = <I, S>(tag: Context.Key<I, S>, layer: Layer.Layer<I>) => Effect.map(Layer.build(layer), (built) => Context.get(built, tag))

/**
 * The OpenAI Images backend; the links it answers with are fetched through the real safe_http
 * stack (production policy unless told otherwise) over the loopback-only connector.
 */
export const openAiImagesBackend = (settings: Partial<ImageSettings>, web: WebKitOptions = { production: true }) =>
  Effect.map(openAiImagesWithStack(settings, web), ({ backend }) => backend)

/** `openAiImagesBackend` with the loopback connector, which records every address dialled. */
export const openAiImagesWithStack = (settings: Partial<ImageSettings>, web: WebKitOptions = { production: true }) => {
  const stack = webStack(web)
  return Effect.map(
    service(ImageBackend, OpenAiImages.layer.pipe(Layer.provide(Layer.mergeAll(httpClient, stack.layer, ImageConfig.make({ backend: Option.some("openai"), ...settings }))))),
    (backend) => ({ backend, connector: stack.connector })
  )
}

export const comfyBackend = (baseUrl: string, workflow: ComfyWorkflowJson, settings: Partial<ImageSettings> = {}) =>
  service(
    ImageBackend,
    ComfyUi.layer.pipe(Layer.provide(Layer.merge(httpClient, ImageConfig.make({ backend: Option.some("comfyui"), baseUrl, comfyWorkflow: Option.some(workflow), ...settings }))))
  )

export const speechBackend = (baseUrl: string, settings: Partial<SpeechSettings> = {}) =>
  service(SpeechBackend, OpenAiSpeech.layer.pipe(Layer.provide(Layer.merge(httpClient, SpeechConfig.make({ baseUrl: Option.some(baseUrl), ...settings })))))

export const key = (value: string) => Option.some(Redacted.make(value))

/** A ComfyUI API-format workflow of the usual nodes, with the placeholders of `modes`. */
export const comfyWorkflow = (modes: { readonly image?: boolean; readonly mask?: boolean; readonly negative?: boolean } = {}): ComfyWorkflowJson => ({
  "3": { class_type: "KSampler", inputs: { seed: "%seed%", steps: 20, cfg: 7, sampler_name: "euler", scheduler: "normal", denoise: "%denoise%", model: ["4", 0], positive: ["6", 0], negative: ["7", 0], latent_image: ["5", 0] } },
  "4": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "sdxl.safetensors" } },
  "5": { class_type: "EmptyLatentImage", inputs: { width: "%width%", height: "%height%", batch_size: 1 } },
  "6": { class_type: "CLIPTextEncode", inputs: { text: "masterpiece, %prompt%", clip: ["4", 1] } },
  "7": { class_type: "CLIPTextEncode", inputs: { text: modes.negative === true ? "%negative_prompt%" : "blurry", clip: ["4", 1] } },
  ...(modes.image === true ? { "10": { class_type: "LoadImage", inputs: { image: "%image%" } } } : {}),
  ...(modes.mask === true ? { "11": { class_type: "LoadImageMask", inputs: { image: "%mask%", channel: "red" } } } : {}),
  "9": { class_type: "SaveImage", inputs: { filename_prefix: "loopcord", images: ["8", 0] } }
})
