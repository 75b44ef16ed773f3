/**
 * How MCP servers are named wherever people or logs can read it: by name and origin, never the path
 * or query, because some services put the API key there.
 */

/** `'search' (https://mcp.example)`, or just `'search'` for a server without a URL (stdio). */
export const serverLabel = (name: string, url: URL | string | undefined): string => {
  const parsed = typeof url === "string" ? (URL.canParse(url) ? new URL(url) : undefined) : url
  return parsed === undefined ? `'${name}'` : `'${name}' (${parsed.origin})`
}

/** Path segments and query values this long are treated as possible secrets on their own. */
const SECRET_LIKE_CHARS = 8

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * `text` with every trace of `url`'s path and query replaced by `…`: the whole URL, the path
 * with its query, and each long path segment or query value alone (a server's error text may
 * echo any of them, raw or percent-decoded).
 */
export const redactUrl = (text: string, url: URL | undefined): string => {
  if (url === undefined) return text
  const secrets = new Set<string>()
  const add = (value: string) => {
    if (value.length < 2 || value === "/") return
    secrets.add(value)
    try {
      secrets.add(decodeURIComponent(value))
    } catch {
      // Not percent-encoded text: the raw form is enough.
    }
  }
  add(url.href)
  add(`${url.host}${url.pathname}${url.search}`)
  add(`${url.pathname}${url.search}`)
  add(url.pathname)
  add(url.search)
  add(url.search.slice(1))
  for (const segment of url.pathname.split("/")) if (segment.length >= SECRET_LIKE_CHARS) add(segment)
  for (const [, value] of url.searchParams) {
    if (value.length >= SECRET_LIKE_CHARS) {
      add(value)
      add(encodeURIComponent(value))
    }
  }
  const ordered = [...secrets].filter((secret) => secret.length >= 2).sort((a, b) => b.length - a.length)
  if (ordered.length === 0) return text
  return text.replace(new RegExp(ordered.map(escapeRegExp).join("|"), "g"), (match) =>
    match === url.href ? url.origin : "…"
  )
}
