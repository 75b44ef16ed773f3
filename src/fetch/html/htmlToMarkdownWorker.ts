/**
 * The HTML→Markdown worker thread (started by `HtmlConverter`): converts one page per message,
 * off the main event loop. `htmlToMarkdown` is total, so every request gets exactly one answer;
 * a page that takes too long is stopped by terminating the thread.
 */
import { parentPort } from "node:worker_threads"
import { htmlToMarkdown } from "./htmlToMarkdown"
import type { ConversionReply, ConversionRequest } from "./conversionMessages"

const port = parentPort
if (port === null) throw new Error("htmlToMarkdownWorker runs as a worker thread (HtmlConverter starts it)")

port.on("message", (request: ConversionRequest) => {
  const conversion = htmlToMarkdown(request.html, request.baseUrl === undefined ? {} : { baseUrl: new URL(request.baseUrl) })
  const reply: ConversionReply = { id: request.id, conversion }
  port.postMessage(reply)
})
