import { pageServer } from "../fakeWeb/pageServer"
import { pixelPng } from "../mediaFixtures"

/**
 * A loopback image host (scoped): `/pixel.png` the PNG fixture, `/page.png` HTML under an image
 * name and type, `/big.png` a PNG of `bigBytes`, `/missing.png` 404, `/slow.png` never answers.
 */
export const imageHost = (options: { readonly bigBytes?: number } = {}) =>
  pageServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://host").pathname
    if (path === "/pixel.png") {
      response.writeHead(200, { "content-type": "image/png" })
      response.end(Buffer.from(pixelPng()))
    } else if (path === "/page.png") {
      response.writeHead(200, { "content-type": "image/png" })
      response.end("<!doctype html><title>not an image</title>")
    } else if (path === "/big.png") {
      const big = Buffer.alloc(options.bigBytes ?? 3 * 1024 * 1024)
      Buffer.from(pixelPng()).copy(big)
      response.writeHead(200, { "content-type": "image/png" })
      response.end(big)
    } else if (path === "/slow.png") {
      // Never answers: a stalled download.
    } else {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("not found")
    }
  })
