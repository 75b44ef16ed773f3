import { Cause, Effect } from "effect"
import type { AssemblyContext, AvailabilityContext, Tool } from "./Tool"

/**
 * Dynamic assembly (docs/architecture.md, Tool availability and assembly): after availability filtering, each tool may narrow itself to
 * what this turn can actually do. No hook ⇒ the same object; a variant ⇒ used instead; `null`
 * ⇒ hidden; a failing hook ⇒ that tool is omitted with a warning, the others are still returned.
 */
export const assembleTools = (
  tools: ReadonlyArray<Tool>,
  context: AvailabilityContext
): Effect.Effect<ReadonlyArray<Tool>> => {
  // The common case, every pass: no tool narrows itself, so there is nothing to run.
  if (tools.every((tool) => tool.assembleForContext === undefined)) return Effect.succeed(tools)
  const assemblyContext: AssemblyContext = { ...context, availableToolNames: new Set(tools.map((tool) => tool.name)) }
  return Effect.forEach(tools, (tool) => assembleOne(tool, assemblyContext)).pipe(
    Effect.map((assembled) => assembled.filter((tool): tool is Tool => tool !== null))
  )
}

const assembleOne = (tool: Tool, context: AssemblyContext): Effect.Effect<Tool | null> => {
  const hook = tool.assembleForContext
  if (hook === undefined) return Effect.succeed(tool)
  const omit = (reason: string) =>
    Effect.as(Effect.logWarning(`Tool '${tool.name}' omitted for this turn: assembly failed: ${reason}`), null)
  // Effect.suspend turns a hook that throws instead of failing into a defect we can catch.
  return Effect.suspend(() => hook(context)).pipe(
    Effect.flatMap((variant) =>
      variant !== null && variant.name !== tool.name
        ? omit(`the variant is named '${variant.name}'`)
        : Effect.succeed(variant)
    ),
    // Failures and defects omit the tool; an interruption still propagates.
    Effect.catch((error) => omit(describe(error))),
    Effect.catchDefect((defect) => omit(describe(defect)))
  )
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : Cause.isCause(error) ? Cause.pretty(error) : String(error)
