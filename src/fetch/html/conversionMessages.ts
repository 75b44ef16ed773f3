import type { Conversion } from "./convertHtml"

/** A page as fetched (bytes and their content type, decoded where it is converted) or as text. */
export type HtmlPage =
  | { readonly html: string }
  | { readonly body: Uint8Array; readonly contentType: string | undefined }

/** Main thread → conversion worker: one page. */
export interface ConversionRequest {
  readonly id: number
  readonly page: HtmlPage
  /** The page URL (links resolve against it). */
  readonly baseUrl: string | undefined
}

/** Conversion worker → main thread: the answer to request `id`. */
export interface ConversionReply {
  readonly id: number
  readonly conversion: Conversion
}
