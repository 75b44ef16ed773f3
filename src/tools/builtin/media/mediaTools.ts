import type * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer, Option, type Scope } from "effect"
import { ImageConfig } from "../../../config/ImageConfig"
import { ProviderConfig } from "../../../config/ProviderConfig"
import { SpeechConfig } from "../../../config/SpeechConfig"
import { seesImages, VisionConfig } from "../../../config/VisionConfig"
import * as ComfyUi from "../../../media/image/ComfyUi"
import * as OpenAiImages from "../../../media/image/OpenAiImages"
import type { ImageLoader } from "../../../media/ImageLoader"
import type { MediaLibrary } from "../../../media/MediaLibrary"
import type { MessageImages } from "../../../media/MessageImages"
import * as OpenAiSpeech from "../../../media/speech/OpenAiSpeech"
import type { SafeHttp } from "../../../fetch/SafeHttp"
import type { LanguageModel } from "../../../provider/LanguageModel"
import type { Tool } from "../../Tool"
import { analyzeImageTool } from "./AnalyzeImageTool"
import { generateImageTool } from "./GenerateImageTool"
import { generateVoiceMessageTool } from "./GenerateVoiceMessageTool"

type MediaToolServices =
  | ImageConfig
  | SpeechConfig
  | VisionConfig
  | ProviderConfig
  | HttpClient.HttpClient
  | SafeHttp
  | LanguageModel
  | ImageLoader
  | MediaLibrary
  | MessageImages
  | Scope.Scope

/**
 * The media tools whose backend is configured (docs/architecture.md, Media): generate_image with IMAGE_BACKEND,
 * generate_voice_message with SPEECH_BASE_URL, analyze_image with a vision model (VISION_MODEL,
 * or a primary model listed in LLM_VISION_MODELS). Each backend is built from its Layer in the
 * caller's scope.
 */
export const mediaTools: Effect.Effect<ReadonlyArray<Tool>, never, MediaToolServices> = Effect.gen(function*() {
  const image = yield* ImageConfig
  const speech = yield* SpeechConfig
  const vision = yield* VisionConfig
  const provider = yield* ProviderConfig
  const tools: Array<Tool> = []
  if (Option.isSome(image.backend)) {
    const backend = yield* Layer.build(image.backend.value === "openai" ? OpenAiImages.layer : ComfyUi.layer)
    const tool = yield* Effect.provide(generateImageTool, backend)
    if (tool !== undefined) tools.push(tool)
    yield* Effect.logInfo(`generate_image: ${image.backend.value} at ${image.baseUrl}`)
  }
  if (Option.isSome(speech.baseUrl)) {
    const backend = yield* Layer.build(OpenAiSpeech.layer)
    tools.push(yield* Effect.provide(generateVoiceMessageTool, backend))
  }
  const primary = provider.models[0] ?? ""
  const visionModel = Option.getOrElse(vision.model, () => primary)
  if (Option.isSome(vision.model) || seesImages(vision, primary)) {
    // One key: analyze_image is one short request; the turn's own rotation stays with the turn.
    tools.push(yield* analyzeImageTool({ model: visionModel, apiKey: provider.apiKeys[0] }))
  }
  return tools
})

