/**
 * Deliberate tool mode for one turn: only the tools whose trigger phrases the message matched are
 * declared, and a call of any other tool is refused before it runs.
 */
export interface DeliberateToolMode {
  readonly active: boolean
  /** Names the model may call; empty means no allowlist. */
  readonly allowedNames: ReadonlyArray<string>
  /** Which trigger phrase exposed each tool, for the hidden trigger notice. */
  readonly triggerMatchByToolName: ReadonlyMap<string, { readonly trigger: string; readonly source: string }>
  /** Turns a successful tool stays exposed afterwards (affordance retention). */
  readonly contextTurns: number
  /**
   * Deliberate mode is on but the message asked for no tool: declare no tools this turn (fails
   * closed: a message that names no tool gets none). Absent means false.
   */
  readonly disableAllTools?: boolean
}

export const deliberateModeOff: DeliberateToolMode = {
  active: false,
  allowedNames: [],
  triggerMatchByToolName: new Map(),
  contextTurns: 0
}
