import type { Conversion } from "./convertHtml"

/** Main thread → conversion worker: one page. */
export interface ConversionRequest {
  readonly id: number
  readonly html: string
  /** The page URL (links resolve against it). */
  readonly baseUrl: string | undefined
}

/** Conversion worker → main thread: the answer to request `id`. */
export interface ConversionReply {
  readonly id: number
  readonly conversion: Conversion
}
