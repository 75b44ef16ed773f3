import { Context, Duration, Effect, Option } from "effect"

/** Tools that wait for a human before they run (the port the loop asks once, right before dispatch). */
export interface ToolApprovalsShape {
  readonly timeout: Duration.Duration
  readonly required: (request: unknown) => Effect.Effect<boolean>
  readonly ask: (request: unknown) => Effect.Effect<Option.Option<unknown>>
}

/** No tool waits: the default wherever no front provides approvals. */
export const noApprovals: ToolApprovalsShape = {
  timeout: Duration.millis(120_000),
  required: () => Effect.succeed(false),
  ask: () => Effect.succeed(Option.none())
}

// v3 `class X extends Context.Reference<X>()(key, { defaultValue })` → v4 `Context.Reference<Shape>(key, { defaultValue })`.
export const ToolApprovals = Context.Reference<ToolApprovalsShape>("loopcord/tools/ToolApprovals", {
  defaultValue: (): ToolApprovalsShape => noApprovals
})
