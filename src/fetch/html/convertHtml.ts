import { CHROME, type DomNode, domToMarkdown } from "./domToMarkdown"
import { htmlToPlainText } from "./plainText"
import { scanHtml } from "./scanHtml"

/**
 * Limits that keep conversion linear on hostile pages (measured in test/bench/fetchUrl.bench.ts
 * and the converter tests): beyond them the DOM is never built and the linear plain-text pass
 * runs instead.
 */
export const CONVERTER_LIMITS = {
  /** Estimated element nesting; DOM parsers close tags by searching the open-element stack. */
  maxDepth: 256,
  /** Elements plus character references (each costs the DOM parser a node). */
  maxNodes: 200_000,
  /** Characters of HTML handed to the DOM parser. */
  maxDomInput: 8 * 1024 * 1024,
  /** Characters of Markdown kept (about 20 default slices). */
  maxOutput: 1_000_000
} as const

export type ConversionMode = "markdown" | "plain-text"

export interface Conversion {
  readonly text: string
  readonly mode: ConversionMode
  /** Why the plain-text pass ran instead of the DOM path. */
  readonly fallbackReason?: string
  readonly title: string | undefined
  /** The output hit `maxOutput` and was cut. */
  readonly truncated: boolean
}

interface Queryable extends DomNode {
  readonly textContent: string | null
  readonly querySelector: (selector: string) => Queryable | null
  readonly querySelectorAll: (selector: string) => ArrayLike<Queryable>
}

interface ParsedDocument {
  readonly title: string
  readonly body: Queryable | null
  readonly documentElement: Queryable | null
  readonly querySelector: (selector: string) => Queryable | null
  readonly querySelectorAll: (selector: string) => ArrayLike<Queryable>
}

/** The DOM parser (linkedom's `parseHTML`), passed in so this module never loads linkedom itself. */
export type ParseHtml = (html: string) => { readonly document: unknown }

export interface ConvertOptions {
  readonly baseUrl?: URL
  readonly limits?: Partial<Record<keyof typeof CONVERTER_LIMITS, number>>
}

const textLength = (node: Queryable | null): number => (node?.textContent ?? "").replace(/\s+/g, " ").trim().length

/** `<main>` / `[role=main]` / a single `<article>`, unless it holds a small part of the page's text. */
const mainContent = (document: ParsedDocument): { readonly root: Queryable; readonly isBody: boolean } | undefined => {
  const body = document.body ?? document.documentElement
  if (body === null) return undefined
  const articles = document.querySelectorAll("article")
  const candidate =
    document.querySelector("main") ??
    document.querySelector("[role=main]") ??
    (articles.length === 1 ? (articles[0] ?? null) : null)
  if (candidate !== null) {
    const inMain = textLength(candidate)
    if (inMain >= 200 || inMain >= textLength(body) * 0.5) return { root: candidate, isBody: false }
  }
  return { root: body, isBody: true }
}

const plain = (html: string, reason: string, maxOutput: number): Conversion => {
  const text = htmlToPlainText(html, maxOutput + 1)
  return { text: text.slice(0, maxOutput), mode: "plain-text", fallbackReason: reason, title: undefined, truncated: text.length > maxOutput }
}

/**
 * HTML → Markdown for fetch_url: main content preferred; script, style, noscript and template
 * dropped; ATX headings, `-` bullets, fenced code. Guarded: a linear pre-scan sends too deep or too
 * large pages to the plain-text pass, any converter exception does too, and the output is capped.
 * Synchronous and total: it never throws.
 */
export const convertHtml = (parseHTML: ParseHtml, html: string, options: ConvertOptions = {}): Conversion => {
  const limits = { ...CONVERTER_LIMITS, ...options.limits }
  if (html.length > limits.maxDomInput) return plain(html, `page larger than ${limits.maxDomInput} characters`, limits.maxOutput)
  const shape = scanHtml(html)
  if (shape.maxDepth > limits.maxDepth) return plain(html, `elements nested deeper than ${limits.maxDepth}`, limits.maxOutput)
  if (shape.elements + shape.references > limits.maxNodes) {
    return plain(html, `more than ${limits.maxNodes} elements and character references`, limits.maxOutput)
  }
  try {
    // linkedom needs an <html> element: without one it makes the first element the document
    // element and loses the body's content.
    const whole = /<html[\s>]/i.test(html)
      ? html
      : /<(?:body|head)[\s>]/i.test(html)
        ? `<!doctype html><html>${html}</html>`
        : `<!doctype html><html><body>${html}</body></html>`
    const document = parseHTML(whole).document as unknown as ParsedDocument
    const main = mainContent(document)
    if (main === undefined) return plain(html, "no document body", limits.maxOutput)
    const converted = domToMarkdown(main.root, {
      maxChars: limits.maxOutput,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
      ...(main.isBody ? { skip: CHROME } : {})
    })
    const title = document.title.replace(/\s+/g, " ").trim()
    return { text: converted.markdown, mode: "markdown", title: title === "" ? undefined : title, truncated: converted.truncated }
  } catch (error) {
    return plain(html, `converter failed: ${error instanceof Error ? error.message : String(error)}`, limits.maxOutput)
  }
}
