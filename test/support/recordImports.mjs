// `node --import ./recordImports.mjs …`: records every package the process imports (the bare
// specifiers ESM resolution sees) and every dist/ chunk it loads (`dist:<file>`) into the file
// named by LOOPCORD_IMPORT_LOG, one per line.
// The lazy-loading test uses it to check what a front loads. A module hook runs on its own
// thread, so it writes the file itself.
import { register } from "node:module"

const file = process.env.LOOPCORD_IMPORT_LOG
if (file !== undefined && file !== "") register("./recordImportsHooks.mjs", import.meta.url, { data: { file } })
