import { assert, describe, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeHtmlConverter } from "../../src/fetch/html/HtmlConverter"
import { htmlToMarkdown } from "../../src/fetch/html/htmlToMarkdown"

/** An article of about `chars` characters: headings, paragraphs with links, a list. */
const article = (chars: number): string => {
  let body = ""
  for (let index = 0; body.length < chars; index++) {
    body += index % 9 === 0
      ? `<h2>Section ${index}</h2><ul><li>item ${index}</li><li>another</li></ul>`
      : `<p>Paragraph ${index} links <a href="/ref/${index}">a reference</a> and says <strong>something</strong>.</p>`
  }
  return `<!doctype html><html><head><title>Big page</title></head><body><nav>menu</nav><main>${body}</main></body></html>`
}

const small = article(4 * 1024)
const large = article(300 * 1024)
const baseUrl = new URL("https://example.test/articles/one")

/** Waits (real time) until the pool has `count` threads. */
const workersSettleAt = (converter: Effect.Success<ReturnType<typeof makeHtmlConverter>>, count: number) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 500; attempt++) {
      if ((yield* converter.workerCount) === count) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.fail(`the pool never settled at ${count} worker(s) (has ${yield* converter.workerCount})`)
  })

describe("HtmlConverter (HTML → Markdown off the event loop)", () => {
  it.live("a page below the threshold converts on the calling thread, exactly as the synchronous converter does", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 64 * 1024 })
      const conversion = yield* converter.convert({ html: small }, { baseUrl })
      assert.deepStrictEqual(conversion, htmlToMarkdown(small, { baseUrl }))
      assert.strictEqual(yield* converter.workerCount, 0, "no worker thread for a small page")
    }))

  it.live("a large page converts in a worker thread with the same result, and the worker is reused", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 64 * 1024, workers: 2 })
      const conversion = yield* converter.convert({ html: large }, { baseUrl })
      const expected = htmlToMarkdown(large, { baseUrl })
      assert.strictEqual(conversion.mode, "markdown")
      assert.strictEqual(conversion.title, "Big page")
      assert.include(conversion.text, "[a reference](https://example.test/ref/1)", "links resolve against the page URL in the worker")
      assert.deepStrictEqual(conversion, expected)
      assert.strictEqual(yield* converter.workerCount, 1)
      yield* converter.convert({ html: large }, { baseUrl })
      assert.strictEqual(yield* converter.workerCount, 1, "one page at a time reuses the idle worker")
    }), 60_000)

  it.live("a large body is decoded with its charset in the worker; its bytes are transferred, not copied", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 64 * 1024 })
      const html = large.replace("<main>", "<main><p>Un café à Zürich</p>")
      const body = Buffer.from(html, "latin1")
      const owned = new Uint8Array(body.byteLength)
      owned.set(body)
      const conversion = yield* converter.convert({ body: owned, contentType: "text/html; charset=iso-8859-1" }, { baseUrl })
      assert.include(conversion.text, "Un café à Zürich")
      assert.deepStrictEqual(conversion, htmlToMarkdown(html, { baseUrl }))
      assert.strictEqual(owned.byteLength, 0, "the buffer moved to the worker")
      assert.strictEqual(yield* converter.workerCount, 1)
    }), 60_000)

  it.live("pages beyond the workers and the queue are refused at once as busy", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 1024, workers: 1, maxQueued: 1 })
      const first = yield* Effect.forkChild(converter.convert({ html: large }))
      const second = yield* Effect.forkChild(converter.convert({ html: large }))
      yield* workersSettleAt(converter, 1)
      const third = yield* Effect.exit(converter.convert({ html: large }))
      assert.isTrue(Exit.isFailure(third))
      const error = Exit.isFailure(third) ? Cause.pretty(third.cause) : undefined
      assert.include(String(error), "busy")
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(second)), "the queued page waits for the worker")
    }), 60_000)

  it.effect("a conversion past its deadline fails as a timeout and its worker is terminated", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 1024, timeout: Duration.seconds(20) })
      const fiber = yield* Effect.forkChild(converter.convert({ html: large }))
      yield* workersSettleAt(converter, 1)
      yield* TestClock.adjust(Duration.seconds(21))
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "took longer than 20s")
      yield* workersSettleAt(converter, 0)
      // The pool starts a fresh worker for the next page.
      const next = yield* Effect.forkChild(converter.convert({ html: small + " ".repeat(2048) }))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(next)))
    }), 60_000)

  it.live("interrupting a conversion (the tool call killed) terminates its worker", () =>
    Effect.gen(function*() {
      const converter = yield* makeHtmlConverter({ inlineBelowChars: 1024 })
      const fiber = yield* Effect.forkChild(converter.convert({ html: article(2 * 1024 * 1024) }))
      yield* workersSettleAt(converter, 1)
      yield* Fiber.interrupt(fiber)
      yield* workersSettleAt(converter, 0)
    }), 60_000)

  it.live("a worker that dies (out of heap) fails the conversion with a clear error and leaves no thread behind", () =>
    Effect.gen(function*() {
      const starved = yield* makeHtmlConverter({ inlineBelowChars: 1024, workerHeapMb: 4 })
      const exit = yield* Effect.exit(starved.convert({ html: article(4 * 1024 * 1024) }))
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(Exit.isFailure(exit) ? exit.cause : ""), /HTML converter (failed|stopped)/)
      yield* workersSettleAt(starved, 0)
    }), 60_000)

  it.live("closing the converter's scope terminates its workers", () =>
    Effect.gen(function*() {
      const count = yield* Effect.scoped(Effect.gen(function*() {
        const converter = yield* makeHtmlConverter({ inlineBelowChars: 1024 })
        yield* converter.convert({ html: large })
        return { converter, during: yield* converter.workerCount }
      }))
      assert.strictEqual(count.during, 1)
      assert.strictEqual(yield* count.converter.workerCount, 0)
    }), 60_000)
})
