import { Predicate } from "effect"
/**
 * URL-typed arguments of a tool call: values of properties whose schema says `format: uri` (or
 * whose items do) or whose name is url/uri/urls, found recursively through nested objects and
 * arrays. Replacement-family servers (url_fetcher, web_search) get these checked by the same
 * address policy as fetch_url before the call is sent.
 */

const URL_PROPERTY_NAMES: ReadonlySet<string> = new Set(["url", "uri", "urls"])
const URL_FORMATS: ReadonlySet<string> = new Set(["uri", "url", "iri"])

const field = (schema: unknown, key: string): unknown => (Predicate.isObject(schema) ? schema[key] : undefined)

const hasUrlFormat = (schema: unknown): boolean => {
  const format = field(schema, "format")
  return typeof format === "string" && URL_FORMATS.has(format.toLowerCase())
}

const collectStrings = (value: unknown, into: Array<string>): void => {
  if (typeof value === "string") into.push(value)
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into)
}

const walk = (schema: unknown, value: unknown, urlTyped: boolean, into: Array<string>): void => {
  if (urlTyped) {
    collectStrings(value, into)
    return
  }
  if (Array.isArray(value)) {
    const items = field(schema, "items")
    for (const item of value) walk(items, item, hasUrlFormat(items), into)
    return
  }
  if (!Predicate.isObject(value)) return
  const properties = field(schema, "properties")
  for (const [key, child] of Object.entries(value)) {
    const childSchema = Predicate.isObject(properties) ? properties[key] : undefined
    const typed =
      URL_PROPERTY_NAMES.has(key.toLowerCase()) || hasUrlFormat(childSchema) || hasUrlFormat(field(childSchema, "items"))
    walk(childSchema, child, typed, into)
  }
}

/** Every URL-typed string in `args`, in document order. */
export const urlArguments = (inputSchema: unknown, args: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  walk(inputSchema, args, false, found)
  return found
}
