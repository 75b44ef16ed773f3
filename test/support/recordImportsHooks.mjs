// Module resolution hooks for recordImports.mjs: each bare specifier resolved, appended to a file.
import { appendFileSync } from "node:fs"

let file

export const initialize = (data) => {
  file = data.file
}

export const resolve = async (specifier, context, next) => {
  if (file !== undefined && !specifier.startsWith(".") && !specifier.startsWith("/") && !specifier.startsWith("file:") && !specifier.startsWith("node:")) {
    appendFileSync(file, `${specifier}\n`)
  }
  return next(specifier, context)
}
