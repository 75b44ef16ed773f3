import type { ShortTermMemory } from "../../../store/ShortTermMemoryStore"
import { type ShortTermMemoryCategory, defaultShortTermMemoryCategories } from "./UpdateShortTermMemoryTool"

/**
 * The short-term memory as a block for the system prompt (the context builder adds it), or
 * `undefined` when there is nothing to show. Configured categories come first, in their order;
 * categories no longer configured are still shown, so nothing the model wrote is lost.
 */
export const renderShortTermMemory = (
  memory: ShortTermMemory,
  categories: ReadonlyArray<ShortTermMemoryCategory> = defaultShortTermMemoryCategories
): string | undefined => {
  const known = categories.map((category) => category.name)
  const names = [...known.filter((name) => name in memory), ...Object.keys(memory).filter((name) => !known.includes(name))]
  const lines = names
    .map((name) => [name, memory[name]?.trim() ?? ""] as const)
    .filter(([, text]) => text.length > 0)
    .map(([name, text]) => `${name}: ${text}`)
  if (lines.length === 0) return undefined
  return [
    "[Your short-term memory of this conversation (update it with update_short_term_memory when it changes)]",
    ...lines
  ].join("\n")
}
