// The conversion worker when loopcord runs from TypeScript (tsx, vitest): a worker thread does
// not inherit the parent's tsx loader, so it registers tsx and then imports the worker. The
// compiled build (dist/) starts dist/htmlToMarkdownWorker.js directly.
import { register } from "tsx/esm/api"

register()
await import(new URL("./htmlToMarkdownWorker.ts", import.meta.url).href)
