// Module resolution hooks for recordImports.mjs: each bare specifier resolved, appended to a file,
// and each module of dist/ loaded as `dist:<file>` (the bundled code splits into chunks, so a
// bundled library, @effect/sql-pg for one, shows as the chunk it was split into).
import { appendFileSync } from "node:fs"
import { basename } from "node:path"

let file

export const initialize = (data) => {
  file = data.file
}

const bare = (specifier) =>
  !specifier.startsWith(".") && !specifier.startsWith("/") && !specifier.startsWith("file:") && !specifier.startsWith("node:")

export const resolve = async (specifier, context, next) => {
  if (file !== undefined && bare(specifier)) appendFileSync(file, `${specifier}\n`)
  const resolved = await next(specifier, context)
  if (file !== undefined && resolved.url.startsWith("file:") && /\/dist\/[^/]+\.js$/.test(resolved.url)) {
    appendFileSync(file, `dist:${basename(new URL(resolved.url).pathname)}\n`)
  }
  return resolved
}
