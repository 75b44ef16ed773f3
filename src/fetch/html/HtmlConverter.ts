import { Context, Data, Duration, Effect, Layer, Option, Ref, Semaphore } from "effect"
import { Worker } from "node:worker_threads"
import type { ConversionReply, ConversionRequest, HtmlPage } from "./conversionMessages"
import { type Conversion, convertHtml, type ConvertOptions } from "./convertHtml"
import { decodeBody } from "./decodeBody"


interface HtmlConverterOptions {
  /**
   * Pages shorter than this (characters of text, or bytes of a body) convert on the calling thread: up to here a
   * conversion takes a few milliseconds (test/bench/fetchUrl.bench.ts), less than a round trip
   * to a worker costs the caller in latency.
   */
  readonly inlineBelowChars: number
  /** Worker threads at most; each converts one page at a time. */
  readonly workers: number
  /** Pages waiting for a free worker at most; one more fails at once (`busy`). */
  readonly maxQueued: number
  /** Deadline of one conversion, waiting included; a worker still converting is terminated. */
  readonly timeout: Duration.Input
  /** V8 heap limit of a worker: a hostile page cannot grow the process without bound. */
  readonly workerHeapMb: number
}

const defaultHtmlConverterOptions: HtmlConverterOptions = {
  inlineBelowChars: 64 * 1024,
  workers: 2,
  maxQueued: 16,
  timeout: Duration.seconds(20),
  workerHeapMb: 512
}

/** A page could not be converted: the converter is saturated, too slow, or its worker died. */
class HtmlConversionError extends Data.TaggedError("HtmlConversionError")<{
  readonly reason: "busy" | "timeout" | "worker_failed"
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

// From TypeScript (tsx, vitest) the worker needs tsx registered first; the build (dist/, one flat
// directory) has the compiled worker next to every chunk.
const workerUrl = new URL(
  import.meta.url.endsWith(".ts") ? "./htmlToMarkdownWorker.dev.mjs" : "./htmlToMarkdownWorker.js",
  import.meta.url
)

interface PooledWorker {
  readonly thread: Worker
  /** Cleared when the thread exits (crash, heap limit, terminate). */
  alive: boolean
}

/**
 * HTML → Markdown off the event loop: small pages convert inline, larger ones in a small pool of
 * worker threads with a bounded queue and a deadline. A conversion that times out or is interrupted
 * (the tool call killed) terminates its worker, the only way to stop synchronous parsing; the pool
 * starts a new one when next needed. linkedom loads on first use only (on this thread for small
 * pages, in the worker for the rest).
 */
export const makeHtmlConverter = (overrides: Partial<HtmlConverterOptions> = {}) =>
  Effect.gen(function*() {
    const options = { ...defaultHtmlConverterOptions, ...overrides }
    const permits = yield* Semaphore.make(options.workers)
    /** Conversions holding or waiting for a worker. */
    const pending = yield* Ref.make(0)
    const idle = yield* Ref.make<ReadonlyArray<PooledWorker>>([])
    const threads = yield* Ref.make<ReadonlySet<PooledWorker>>(new Set())
    const nextId = yield* Ref.make(0)
    const linkedom = yield* Effect.cached(Effect.promise(() => import("linkedom")))

    const forget = (worker: PooledWorker) =>
      Ref.update(threads, (all) => {
        const rest = new Set(all)
        rest.delete(worker)
        return rest
      })

    const stop = (worker: PooledWorker) =>
      Effect.andThen(
        forget(worker),
        Effect.promise(() => worker.thread.terminate().then(() => undefined, () => undefined))
      )

    yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(threads), (all) => Effect.forEach(all, stop, { discard: true })))

    const spawn = Effect.gen(function*() {
      const thread = new Worker(workerUrl, { resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb } })
      // An idle worker never keeps the process alive (`--once` exits when its turn is done).
      thread.unref()
      const worker: PooledWorker = { thread, alive: true }
      thread.once("exit", () => {
        worker.alive = false
      })
      yield* Ref.update(threads, (all) => new Set([...all, worker]))
      return worker
    })

    const takeIdle = Ref.modify(idle, (all): [Option.Option<PooledWorker>, ReadonlyArray<PooledWorker>] => {
      const live = all.filter((worker) => worker.alive)
      return live.length === 0 ? [Option.none(), live] : [Option.some(live[0]!), live.slice(1)]
    })

    /** One request on one worker; interruption (deadline, kill) terminates the worker. */
    const exchange = (worker: PooledWorker, request: ConversionRequest) =>
      Effect.callback<Conversion, HtmlConversionError>((resume) => {
        const detach = () => {
          // Idle again: an idle worker never keeps the process alive.
          worker.thread.unref()
          worker.thread.off("message", onMessage)
          worker.thread.off("error", onError)
          worker.thread.off("exit", onExit)
        }
        const onMessage = (reply: ConversionReply) => {
          if (reply.id !== request.id) return
          detach()
          resume(Effect.succeed(reply.conversion))
        }
        const onError = (error: Error) => {
          detach()
          resume(Effect.fail(new HtmlConversionError({ reason: "worker_failed", detail: `the HTML converter failed: ${error.message}` })))
        }
        const onExit = (code: number) => {
          detach()
          resume(Effect.fail(new HtmlConversionError({ reason: "worker_failed", detail: `the HTML converter stopped (exit code ${code})` })))
        }
        // Converting: the process stays up until the answer arrives.
        worker.thread.ref()
        worker.thread.on("message", onMessage)
        worker.thread.once("error", onError)
        worker.thread.once("exit", onExit)
        const page = request.page
        // A body's bytes move to the worker (no copy) when the array owns its whole buffer.
        const transfer = "body" in page && page.body.byteOffset === 0 && page.body.byteLength === page.body.buffer.byteLength &&
            page.body.buffer instanceof ArrayBuffer
          ? [page.body.buffer]
          : []
        worker.thread.postMessage(request, transfer)
        return Effect.suspend(() => {
          detach()
          return stop(worker)
        })
      })

    const onWorker = (page: HtmlPage, baseUrl: URL | undefined) =>
      Effect.gen(function*() {
        const worker = yield* Effect.flatMap(takeIdle, Option.match({ onNone: () => spawn, onSome: Effect.succeed }))
        const id = yield* Ref.getAndUpdate(nextId, (n) => n + 1)
        const conversion = yield* exchange(worker, { id, page, baseUrl: baseUrl?.href }).pipe(
          Effect.tapError(() => stop(worker))
        )
        yield* Ref.update(idle, (all) => [...all, worker])
        return conversion
      })

    const admit = Ref.modify(pending, (count): [boolean, number] =>
      count >= options.workers + options.maxQueued ? [false, count] : [true, count + 1])

    const inWorker = (page: HtmlPage, baseUrl: URL | undefined) =>
      Effect.gen(function*() {
        if (!(yield* admit)) {
          return yield* new HtmlConversionError({
            reason: "busy",
            detail: `the HTML converter is busy (${options.workers} pages converting, ${options.maxQueued} waiting); try again shortly`
          })
        }
        return yield* permits.withPermits(1)(onWorker(page, baseUrl)).pipe(
          Effect.ensuring(Ref.update(pending, (count) => count - 1)),
          Effect.timeoutOrElse({
            duration: options.timeout,
            orElse: () =>
              Effect.fail(
                new HtmlConversionError({
                  reason: "timeout",
                  detail: `converting the page took longer than ${Duration.format(Duration.fromInputUnsafe(options.timeout))}`
                })
              )
          })
        )
      })

    const inline = (page: HtmlPage, convertOptions: ConvertOptions) =>
      Effect.flatMap(linkedom, (module) =>
        Effect.sync(() =>
          convertHtml(module.parseHTML, "html" in page ? page.html : decodeBody(page.body, page.contentType), convertOptions)
        ))

    return {
      /**
       * Markdown (or the plain-text fallback) of one page; never blocks the event loop for long.
       * A large body's bytes are transferred to the worker: do not use them afterwards.
       */
      convert: (page: HtmlPage, convertOptions: { readonly baseUrl?: URL } = {}): Effect.Effect<Conversion, HtmlConversionError> =>
        ("html" in page ? page.html.length : page.body.byteLength) < options.inlineBelowChars
          ? inline(page, convertOptions)
          : inWorker(page, convertOptions.baseUrl),
      /** Worker threads running now (idle or converting). */
      workerCount: Effect.map(Ref.get(threads), (all) => all.size)
    } as const
  })

export class HtmlConverter extends Context.Service<HtmlConverter, Effect.Success<ReturnType<typeof makeHtmlConverter>>>()(
  "loopcord/fetch/HtmlConverter"
) {
  static readonly Default = Layer.effect(HtmlConverter, makeHtmlConverter())
  /** The converter with other limits (tests, benches). */
  static readonly layerWith = (overrides: Partial<HtmlConverterOptions>) => Layer.effect(HtmlConverter, makeHtmlConverter(overrides))
}
