import { DefaultRestOptions, type RESTOptions } from "discord.js"

/**
 * discord.js's request function with multipart bodies encoded to bytes first. discord.js builds
 * uploads as the platform's FormData and sends them through its own undici 6 `request`, which
 * dispatches through the process-wide undici dispatcher; once undici 7 (safe_http, the providers)
 * is loaded that dispatcher is undici 7's, which cannot read that FormData ("action is not a
 * function"), and every file upload fails. Encoding with the platform's own Response first sends
 * the same bytes, with the boundary in Content-Type, through any dispatcher.
 */
export const makeRequestWithEncodedForms: RESTOptions["makeRequest"] = async (url, init) => {
  if (!(init.body instanceof FormData)) return DefaultRestOptions.makeRequest(url, init)
  const encoded = new Response(init.body)
  const body = new Uint8Array(await encoded.arrayBuffer())
  const headers = { ...(init.headers as Record<string, string> | undefined), "content-type": encoded.headers.get("content-type") ?? "multipart/form-data" }
  return DefaultRestOptions.makeRequest(url, { ...init, body, headers })
}
