import { randomBytes } from "node:crypto"
import * as HttpClientRequest from "effect/http/HttpClientRequest"

/** One part of a multipart upload: a text field, or a file with its type. */
export type MultipartField =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly file: Uint8Array; readonly filename: string; readonly contentType: string }

const quoted = (text: string) => text.replace(/[\r\n"]/g, "_")

/**
 * A `multipart/form-data` body (RFC 7578) encoded here, so every HttpClient sends the same bytes
 * (undici's `request` does not take the platform's FormData): each part with its
 * Content-Disposition (and Content-Type for files), a random boundary.
 */
const multipartBody = (fields: ReadonlyArray<MultipartField>): { readonly body: Uint8Array; readonly contentType: string } => {
  const boundary = `----loopcord${randomBytes(12).toString("hex")}`
  const pieces: Array<Buffer> = []
  for (const field of fields) {
    const head = "file" in field
      ? `Content-Disposition: form-data; name="${quoted(field.name)}"; filename="${quoted(field.filename)}"\r\nContent-Type: ${field.contentType}\r\n`
      : `Content-Disposition: form-data; name="${quoted(field.name)}"\r\n`
    pieces.push(Buffer.from(`--${boundary}\r\n${head}\r\n`, "utf8"))
    pieces.push("file" in field ? Buffer.from(field.file) : Buffer.from(field.value, "utf8"))
    pieces.push(Buffer.from("\r\n"))
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: new Uint8Array(Buffer.concat(pieces)), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** `request` with a multipart body of `fields`. */
export const withMultipart = (request: HttpClientRequest.HttpClientRequest, fields: ReadonlyArray<MultipartField>) => {
  const { body, contentType } = multipartBody(fields)
  return HttpClientRequest.bodyUint8Array(request, body, contentType)
}
