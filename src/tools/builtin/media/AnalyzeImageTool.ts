import { Duration, Effect, Result, Option, type Redacted, Ref, Schema, Stream } from "effect"
import { VisionConfig } from "../../../config/VisionConfig"
import type { ChatMessage, ImageRef } from "../../../domain/ChatMessage"
import type { ToolDeclaration } from "../../../domain/ToolDeclaration"
import { toolFailure, toolSuccess, type ToolResult } from "../../../domain/ToolResult"
import { dataUrl } from "../../../media/imageFormat"
import { ImageLoader, type LoadedImage } from "../../../media/ImageLoader"
import { entryOf, locatorOf, MediaLibrary } from "../../../media/MediaLibrary"
import { MessageImages } from "../../../media/MessageImages"
import { failureClassOf, failureClassText } from "../../../loop/FailureClass"
import { LanguageModel } from "../../../provider/LanguageModel"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"

export const ANALYZE_IMAGE = "analyze_image"

/** Images looked at per call, at most (the first ones of the message). */
const MAX_IMAGES_PER_ANALYSIS = 4
/** Characters of the vision model's answer kept. */
const MAX_ANSWER_CHARS = 8000

const AnalyzeArgs = Schema.Struct({
  question: Schema.optional(Schema.String.annotate({ description: "What to look for or answer about the image (default: describe it in detail)." })),
  media_id: Schema.optional(Schema.String.annotate({ description: "The media_id of one image, as shown in an image line of the conversation." })),
  message_id: Schema.optional(Schema.String.annotate({ description: "A message whose images to look at (default: the message being answered; a reply without images falls back to the message it replies to)." })),
  url: Schema.optional(Schema.String.annotate({ description: "The http(s) URL of an image someone wrote in the conversation (for images attached to messages use media_id)." })),
  __original_media_id: Schema.optional(Schema.String)
})
type AnalyzeArgs = typeof AnalyzeArgs.Type

const SYSTEM = "You describe images for another assistant that cannot see them. Be concrete and complete: " +
  "subjects, text in the image (verbatim), setting, colours, style, anything unusual. Answer the question if one is given. " +
  "Never invent what is not visible."

/** Which model answers and with which key: `VISION_MODEL`, else the primary chat model. */
interface VisionRoute {
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
}

const findInContext = (items: ReadonlyArray<ChatMessage>, messageId: string): ChatMessage | undefined =>
  items.find((item) => item.messageId === messageId)

/**
 * `analyze_image`: looks at the images of the requested message — or, when that one
 * has none, of the message it replies to (one level) — or at one image by media_id. Images come
 * through safe_http (address policy, `VISION_MAX_IMAGE_MB`); the answer comes from the vision
 * model through the LanguageModel with image parts. One `VISION_ANALYSIS_TIMEOUT_MS` deadline
 * covers downloads and inference: past it, a failed result, before the tool timeout.
 */
export const analyzeImageTool = (route: VisionRoute): Effect.Effect<Tool, never, LanguageModel | ImageLoader | MediaLibrary | VisionConfig | MessageImages> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel
    const loader = yield* ImageLoader
    const library = yield* MediaLibrary
    const vision = yield* VisionConfig
    const front = yield* MessageImages

    /** The images of a message: from the turn's context, else from the front; plus its reply target. */
    const imagesOfMessage = (items: ReadonlyArray<ChatMessage>, channelId: string, messageId: string) =>
      Effect.gen(function*() {
        const local = findInContext(items, messageId)
        if (local !== undefined && (local.images ?? []).length > 0) return { images: local.images ?? [], replyTo: undefined }
        const remote = yield* front.lookup(channelId, messageId)
        return Option.getOrElse(remote, () => ({ images: [] as ReadonlyArray<ImageRef>, replyTo: undefined }))
      })

    /** Where the images come from (spec: the message, else its reply target, one level). */
    const sources = (args: AnalyzeArgs) =>
      Effect.gen(function*(): Effect.fn.Return<Result.Result<ReadonlyArray<{ readonly id: string; readonly locator: string }>, string>, never, ToolContext> {
        const context = yield* ToolContext
        if (args.media_id !== undefined && args.media_id.trim() !== "") {
          const id = args.__original_media_id ?? args.media_id
          return Result.succeed([{ id, locator: args.media_id }])
        }
        const url = args.url?.trim() ?? ""
        if (url !== "") {
          if (!/^https?:\/\//i.test(url)) return Result.fail("url must be an http(s) URL of an image")
          const entry = yield* library.register({ _tag: "Remote", url })
          return Result.succeed([{ id: entry.id, locator: url }])
        }
        const items = yield* Ref.get(context.turnState.contextItems)
        const requested = args.message_id?.trim() || context.messageId
        let images: ReadonlyArray<ImageRef> = []
        if (requested === undefined) {
          // No front message ids (the terminal): the latest user message with images.
          images = [...items].reverse().find((item) => item.role === "user" && (item.images ?? []).length > 0)?.images ?? []
        } else {
          const found = yield* imagesOfMessage(items, context.channelId, requested)
          images = found.images
          if (images.length === 0 && found.replyTo !== undefined) images = (yield* imagesOfMessage(items, context.channelId, found.replyTo)).images
        }
        if (images.length === 0) {
          return Result.fail(requested === undefined
            ? "There is no image in the conversation to analyze."
            : `Message ${requested} has no image${args.message_id === undefined ? " (nor does the message it replies to)" : ""}; pass the media_id of the image instead.`)
        }
        const entries = yield* Effect.forEach(images.slice(0, MAX_IMAGES_PER_ANALYSIS), (image) => entryOf(library, image))
        return Result.succeed(entries.map((entry) => ({ id: entry.id, locator: locatorOf(entry) })))
      })

    const ask = (question: string, images: ReadonlyArray<LoadedImage>) =>
      model.stream({
        model: route.model,
        apiKey: route.apiKey,
        system: SYSTEM,
        messages: [{ role: "user", content: question, images: images.map((image) => ({ url: dataUrl(image.format.mimeType, image.bytes), mimeType: image.format.mimeType })) }],
        tools: [] as ReadonlyArray<ToolDeclaration>,
        functionHistory: []
      }).pipe(
        Stream.filterMap((event) => (event._tag === "TextDelta" ? Result.succeed(event.text) : Result.failVoid)),
        // The answer is read until it is long enough; the rest of the stream is not waited for.
        (texts) =>
          Effect.suspend(() => {
            let text = ""
            return Stream.runForEachWhile(texts, (delta) =>
              Effect.sync(() => {
                text += delta
                return text.length < MAX_ANSWER_CHARS
              })).pipe(Effect.map(() => text))
          }),
        Effect.map((text) => text.slice(0, MAX_ANSWER_CHARS).trim())
      )

    const analyze = (args: AnalyzeArgs) =>
      Effect.gen(function*(): Effect.fn.Return<ToolResult, never, ToolContext> {
        const context = yield* ToolContext
        const found = yield* sources(args)
        if (Result.isFailure(found)) return toolFailure(found.failure)
        if (!context.suppressProgressNotices) yield* context.progress(`Looking at ${found.success.length === 1 ? "the image" : `${found.success.length} images`}…`)
        const loaded = yield* Effect.forEach(found.success, (source) =>
          Effect.result(loader.load(source.locator, { signal: context.abortSignal })).pipe(Effect.map((image) => ({ source, image }))))
        const usable = loaded.flatMap(({ image, source }) => (Result.isSuccess(image) ? [{ id: source.id, image: image.success }] : []))
        const problems = loaded.flatMap(({ image, source }) => (Result.isFailure(image) ? [`${source.id}: ${image.failure.message}`] : []))
        const details = loaded.flatMap(({ image, source }) =>
          Result.isFailure(image) && image.failure.operatorDetail !== undefined ? [`${source.id}: ${image.failure.operatorDetail}`] : [])
        const detail = details.length === 0 ? {} : { detail: details.join("; ") }
        if (usable.length === 0) return toolFailure(`Could not load the image: ${problems.join("; ")}`, detail)
        const question = args.question?.trim() || "Describe this image in detail."
        const answer = yield* Effect.result(ask(question, usable.map((entry) => entry.image)))
        if (Result.isFailure(answer)) {
          // The vendor's words stay with operators: the model hears what kind of failure it was.
          return toolFailure(`The vision model failed: ${failureClassText[failureClassOf(answer.failure.reason)]}`, { detail: answer.failure.message })
        }
        if (answer.success === "") return toolFailure(`The vision model (${route.model}) gave no answer`)
        return toolSuccess({
          status: "analyzed",
          media_ids: usable.map((entry) => entry.id),
          analysis: answer.success,
          ...(problems.length === 0 ? {} : { skipped: problems })
        })
      })

    const timeoutMs = Duration.toMillis(vision.analysisTimeout)
    return makeTool({
      name: ANALYZE_IMAGE,
      description: "Look at images and get a detailed description or an answer about them: the images of a message (default: the one " +
        "being answered, or the message it replies to), one image by its media_id, or an image URL written in the conversation. " +
        "Use it whenever an image matters and you cannot see it.",
      category: "utility",
      parameters: AnalyzeArgs,
      requiresFollowUp: true,
      execute: (args) =>
        analyze(args).pipe(
          Effect.timeoutOrElse({
            duration: vision.analysisTimeout,
            orElse: () => Effect.succeed(toolFailure(`Image analysis timed out after ${timeoutMs / 1000}s (VISION_ANALYSIS_TIMEOUT_MS); tell the user the image could not be analyzed in time.`))
          })
        )
    })
  })

