/**
 * The HTML→Markdown worker thread (started by `HtmlConverter`): decodes and converts one page
 * per message, off the main event loop. `htmlToMarkdown` is total, so every request gets exactly one answer;
 * a page that takes too long is stopped by terminating the thread.
 */
import { parentPort } from "node:worker_threads"
import type { ConversionReply, ConversionRequest } from "./conversionMessages"
import { decodeBody } from "./decodeBody"
import { htmlToMarkdown } from "./htmlToMarkdown"

const port = parentPort
if (port === null) throw new Error("htmlToMarkdownWorker runs as a worker thread (HtmlConverter starts it)")

port.on("message", (request: ConversionRequest) => {
  const page = request.page
  const html = "html" in page ? page.html : decodeBody(page.body, page.contentType)
  const conversion = htmlToMarkdown(html, request.baseUrl === undefined ? {} : { baseUrl: new URL(request.baseUrl) })
  const reply: ConversionReply = { id: request.id, conversion }
  port.postMessage(reply)
})
