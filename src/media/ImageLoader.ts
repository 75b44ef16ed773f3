import { Context, Data, type Duration, Effect, Layer, Option, Ref } from "effect"
import { VisionConfig } from "../config/VisionConfig"
import { toolFailureClassText } from "../domain/ToolFailureClass"
import { SafeHttp } from "../fetch/SafeHttp"
import { type ImageFormat, sniffImage } from "./imageFormat"
import { MediaLibrary, storedIdOf } from "./MediaLibrary"

/** An image's bytes and what they really are. */
export interface LoadedImage {
  readonly bytes: Uint8Array
  readonly format: ImageFormat
}

type ImageLoadFailure = "unknown_media" | "not_an_image" | "too_large" | "blocked" | "http_status" | "unreachable"

/**
 * An image could not be had. The message (`detail`) is written for the model: the kind of
 * failure and at most the host the URL itself names, never a resolved address or a network
 * error; `operatorDetail` keeps those for the logs and the thought log.
 */
class ImageLoadError extends Data.TaggedError("ImageLoadError")<{
  readonly reason: ImageLoadFailure
  readonly detail: string
  readonly operatorDetail?: string
}> {
  override get message(): string {
    return this.detail
  }
}

/** Downloaded images kept for the next passes of a turn (and the next turns): at most 16, 64 MiB. */
const CACHE_ENTRIES = 16
const CACHE_BYTES = 64 * 1024 * 1024

const hostOf = (url: string): string => (URL.canParse(url) ? new URL(url).host : "the image host")

const make = Effect.gen(function*() {
  const http = yield* SafeHttp
  const library = yield* MediaLibrary
  const vision = yield* VisionConfig
  const cache = yield* Ref.make<ReadonlyMap<string, LoadedImage>>(new Map())

  const remember = (url: string, image: LoadedImage) =>
    Ref.update(cache, (current) => {
      const next = new Map(current)
      next.delete(url)
      next.set(url, image)
      let held = 0
      for (const entry of next.values()) held += entry.bytes.byteLength
      for (const [key, entry] of next) {
        if (next.size <= CACHE_ENTRIES && held <= CACHE_BYTES) break
        held -= entry.bytes.byteLength
        next.delete(key)
      }
      return next
    })

  const asImage = (bytes: Uint8Array, where: string): Effect.Effect<LoadedImage, ImageLoadError> => {
    const format = sniffImage(bytes)
    return format === undefined
      ? Effect.fail(new ImageLoadError({ reason: "not_an_image", detail: `${where} is not an image (not PNG, JPEG, GIF or WebP)` }))
      : Effect.succeed({ bytes, format })
  }

  const download = (url: string, options: { readonly signal?: AbortSignal; readonly timeout?: Duration.Input }) =>
    http.request({
      url,
      headers: { accept: "image/png,image/jpeg,image/gif,image/webp,image/*;q=0.8" },
      maxBytes: vision.maxImageBytes,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.timeout === undefined ? {} : { timeout: options.timeout })
    }).pipe(
      Effect.catchTags({
        UrlPolicyError: (error) =>
          Effect.fail(new ImageLoadError({ reason: "blocked", detail: `The image URL was refused (${toolFailureClassText[error.failureClass]})`, operatorDetail: error.message })),
        ResponseSizeError: () =>
          Effect.fail(new ImageLoadError({
            reason: "too_large",
            detail: `The image at ${hostOf(url)} is larger than ${Math.round(vision.maxImageBytes / (1024 * 1024))} MB (VISION_MAX_IMAGE_MB)`
          })),
        SafeHttpError: (error) =>
          Effect.fail(new ImageLoadError({ reason: "unreachable", detail: `Could not download the image: ${toolFailureClassText[error.failureClass]}`, operatorDetail: error.message }))
      }),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300
          ? asImage(response.body, `The file at ${hostOf(url)}`)
          : Effect.fail(new ImageLoadError({ reason: "http_status", detail: `${hostOf(url)} answered HTTP ${response.status} for the image` }))
      )
    )

  const load = Effect.fn("ImageLoader.load")(function*(
    locator: string,
    options: { readonly signal?: AbortSignal; readonly timeout?: Duration.Input } = {}
  ) {
    const storedId = storedIdOf(locator)
    if (storedId !== undefined) {
      const entry = yield* library.lookup(storedId)
      if (Option.isNone(entry) || entry.value.source._tag !== "Stored") {
        return yield* new ImageLoadError({ reason: "unknown_media", detail: `The media ${storedId} is no longer available` })
      }
      return yield* asImage(entry.value.source.bytes, `The media ${storedId}`)
    }
    const cached = (yield* Ref.get(cache)).get(locator)
    if (cached !== undefined) return cached
    const image = yield* download(locator, options)
    yield* remember(locator, image)
    return image
  })

  return { load }
})

/**
 * Loads an image for a model or a backend: bytes held by the media library as they are; URLs
 * through safe_http (the address policy, pinned DNS, redirects revalidated, the
 * `VISION_MAX_IMAGE_MB` cap). Whatever arrives must sniff as PNG, JPEG, GIF or WebP.
 */
export class ImageLoader extends Context.Service<ImageLoader, Effect.Success<typeof make>>()("loopcord/media/ImageLoader") {
  static readonly Default = Layer.effect(ImageLoader, make)
}
