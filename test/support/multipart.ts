/** One part of a `multipart/form-data` body. */
export interface FormPart {
  readonly name: string
  readonly filename: string | undefined
  readonly contentType: string | undefined
  readonly data: Buffer
}

/**
 * Parses a `multipart/form-data` body (RFC 7578) the way a server would: the boundary from the
 * Content-Type, each part's Content-Disposition name and filename, its Content-Type and bytes.
 * Throws on a body that is not well-formed, so a fake rejects what a real server would.
 */
export const parseMultipart = (contentType: string | undefined, body: Buffer): ReadonlyArray<FormPart> => {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? "")
  const token = boundary?.[1] ?? boundary?.[2]
  if (token === undefined) throw new Error(`not multipart/form-data: ${contentType ?? "no content type"}`)
  const delimiter = Buffer.from(`--${token}`)
  const parts: Array<FormPart> = []
  let start = body.indexOf(delimiter)
  if (start === -1) throw new Error("multipart body without its boundary")
  while (true) {
    const after = start + delimiter.length
    if (body.subarray(after, after + 2).toString() === "--") break
    const next = body.indexOf(delimiter, after)
    if (next === -1) throw new Error("multipart body without its closing boundary")
    // Each part: CRLF, headers, CRLF CRLF, data, CRLF (before the next delimiter).
    const part = body.subarray(after + 2, next - 2)
    const split = part.indexOf("\r\n\r\n")
    if (split === -1) throw new Error("multipart part without headers")
    const headers = part.subarray(0, split).toString("utf8")
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? ""
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1]
    if (name === undefined) throw new Error("multipart part without a name")
    parts.push({
      name,
      filename: /\bfilename="([^"]*)"/.exec(disposition)?.[1],
      contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim(),
      data: Buffer.from(part.subarray(split + 4))
    })
    start = next
  }
  return parts
}
