import { Data } from "effect"

const mib = (bytes: number): string => `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MB`

/** A response body grew past its byte cap (counted after decompression); the read was cancelled. */
export class ResponseSizeError extends Data.TaggedError("ResponseSizeError")<{
  readonly url: string
  readonly limitBytes: number
}> {
  override get message(): string {
    return `Response from ${this.url} exceeds the maximum allowed size (${mib(this.limitBytes)}); the download was stopped`
  }
}

/**
 * Passes `source` through until `maxBytes`, then errors the stream with `overflow()` and cancels
 * the source so the connection stops downloading. Pull-based: nothing is read ahead of the consumer.
 */
export const capReadableStream = (
  source: ReadableStream<Uint8Array>,
  maxBytes: number,
  overflow: () => Error
): ReadableStream<Uint8Array> => {
  const reader = source.getReader()
  let total = 0
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        const chunk = await reader.read()
        if (chunk.done) {
          controller.close()
          return
        }
        total += chunk.value.byteLength
        if (total > maxBytes) {
          const error = overflow()
          controller.error(error)
          await reader.cancel(error).catch(() => undefined)
          return
        }
        controller.enqueue(chunk.value)
      },
      cancel: (reason) => reader.cancel(reason)
    },
    { highWaterMark: 0 }
  )
}
