import { Context, type Effect } from "effect"

/**
 * Deliberate tool mode's retention window: after a tool succeeds in deliberate
 * mode it stays exposed in that channel for a few more turns, so "do it again" still works.
 */
export interface ToolAffordancesShape {
  /** Keep `toolName` exposed in `channelId` for `turns` more turns. */
  readonly retain: (channelId: string, toolName: string, turns: number) => Effect.Effect<void>
  /** Tools still retained in `channelId` (the planner adds them to the allowlist). */
  readonly retained: (channelId: string) => Effect.Effect<ReadonlyArray<string>>
  /** A turn of `channelId` ended: every retention window shrinks by one. */
  readonly turnEnded: (channelId: string) => Effect.Effect<void>
}

export class ToolAffordances extends Context.Service<ToolAffordances, ToolAffordancesShape>()("loopcord/tools/ToolAffordances") {}
