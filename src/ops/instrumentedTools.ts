import { Effect } from "effect"
import type { ToolRegistryShape } from "../tools/ToolRegistry"
import { Instrumentation } from "./Instrumentation"

/**
 * One span per tool call (`loopcord.tool`, under the attempt's span; MCP calls nest inside it),
 * with the tool and its outcome. Without tracing the registry is returned as it is.
 */
export const instrumentToolRegistry = (registry: ToolRegistryShape): Effect.Effect<ToolRegistryShape> =>
  Effect.map(Instrumentation, (instrumentation): ToolRegistryShape =>
    !instrumentation.tracing ? registry : {
      ...registry,
      execute: (name, args) =>
        registry.execute(name, args).pipe(
          Effect.tap((result) =>
            Effect.annotateCurrentSpan({
              "loopcord.tool.status": result.success ? "success" : "failure",
              ...(result.success ? {} : { "loopcord.tool.error": (result.error ?? "").slice(0, 200) })
            })
          ),
          Effect.withSpan("loopcord.tool", { attributes: { "loopcord.tool.name": name.slice(0, 64) } })
        )
    })
