import { parseHTML } from "linkedom"
import { type Conversion, convertHtml, type ConvertOptions } from "./convertHtml"

export { CONVERTER_LIMITS } from "./convertHtml"

/**
 * `convertHtml` with linkedom loaded: what the conversion worker thread runs. The main thread
 * converts through `HtmlConverter`, which imports linkedom only when a page needs it.
 */
export const htmlToMarkdown = (html: string, options: ConvertOptions = {}): Conversion => convertHtml(parseHTML, html, options)
