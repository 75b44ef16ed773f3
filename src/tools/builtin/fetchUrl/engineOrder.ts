/** The engines fetch_url can dispatch to (docs/architecture.md, fetch_url and safe_http). */
type FetchEngineName = "crawl4ai" | "safe_http"

interface EngineOrder {
  readonly order: ReadonlyArray<FetchEngineName>
  /** Names that were dropped, with why (logged once when the tool is built). */
  readonly dropped: ReadonlyArray<{ readonly name: string; readonly reason: string }>
}

/**
 * `FETCH_URL_ENGINE_ORDER` → the dispatch chain: names trimmed and lower-cased, duplicates
 * removed, `mcp_fetch` read as `safe_http` (no separate MCP fetch engine exists), `safe_http` always last exactly
 * once, `crawl4ai` only where private-network fetching is permitted, unknown names
 * dropped.
 */
export const resolveEngineOrder = (
  names: ReadonlyArray<string>,
  options: { readonly allowPrivateNetwork: boolean }
): EngineOrder => {
  const order: Array<FetchEngineName> = []
  const dropped: Array<{ readonly name: string; readonly reason: string }> = []
  for (const raw of names) {
    const name = raw.trim().toLowerCase()
    if (name === "" || name === "safe_http" || name === "mcp_fetch") continue
    if (name !== "crawl4ai") {
      dropped.push({ name, reason: "unknown engine" })
    } else if (!options.allowPrivateNetwork) {
      dropped.push({ name, reason: "crawl4ai is only used where private-network fetching is permitted" })
    } else if (!order.includes(name)) {
      order.push(name)
    }
  }
  return { order: [...order, "safe_http"], dropped }
}
