import { type DeliberateToolMode, deliberateModeOff } from "../../domain/DeliberateToolMode"

/** Where a trigger phrase comes from (shown in the hidden trigger notice). */
type TriggerSource = "built-in" | "retained" | "replacement"

/** A tool the planner may expose, with the phrases that ask for it. */
interface TriggerCandidate {
  readonly name: string
  readonly triggerPatterns?: ReadonlyArray<RegExp> | undefined
}

export interface DeliberatePlanInput {
  /** The guild's `deliberate_tool_mode` capability (DMs: false). */
  readonly enabled: boolean
  /** What the user wrote (plus anything else that states intent, e.g. a reminder's purpose). */
  readonly messageText: string
  /** Every tool the turn could declare. */
  readonly tools: ReadonlyArray<TriggerCandidate>
  /** Tools still inside their retention window in this channel (`ToolAffordances.retained`). */
  readonly retained: ReadonlyArray<string>
  /** `LoopSettings.deliberateToolContextTurns`. */
  readonly contextTurns: number
  /**
   * Tools that stand in for a built-in in this guild (`fetch_url` → a guild url_fetcher's
   * tools): exposing the built-in exposes them too.
   */
  readonly replacements?: ReadonlyMap<string, ReadonlyArray<string>> | undefined
}

/** The longest trigger text kept for the notice. */
const MAX_TRIGGER_TEXT = 100

/** A pattern without `g`/`y`, so testing it twice never depends on `lastIndex`. */
const stateless = (pattern: RegExp): RegExp =>
  pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")) : pattern

const firstMatch = (patterns: ReadonlyArray<RegExp>, text: string): string | undefined => {
  for (const pattern of patterns) {
    const match = stateless(pattern).exec(text)
    if (match !== null) return match[0].trim().slice(0, MAX_TRIGGER_TEXT) || match[0].slice(0, MAX_TRIGGER_TEXT)
  }
  return undefined
}

/**
 * Deliberate tool mode for one turn (docs/architecture.md, Deliberate tool mode). Off ⇒ no allowlist. On ⇒ the
 * allowlist is every tool a trigger phrase in the message asks for, the tools retained from
 * recent successful use in the channel, and the guild's replacements of those; when nothing
 * asks for a tool the turn declares none (`disableAllTools`, failing closed like TomoriBot).
 */
export const planDeliberateToolMode = (input: DeliberatePlanInput): DeliberateToolMode => {
  if (!input.enabled) return deliberateModeOff
  const matches = new Map<string, { readonly trigger: string; readonly source: string }>()
  const text = input.messageText
  for (const tool of input.tools) {
    if (matches.has(tool.name) || tool.triggerPatterns === undefined) continue
    const trigger = firstMatch(tool.triggerPatterns, text)
    if (trigger !== undefined) matches.set(tool.name, { trigger, source: "built-in" satisfies TriggerSource })
  }
  for (const name of input.retained) {
    if (!matches.has(name)) {
      matches.set(name, { trigger: "used successfully in a recent turn", source: "retained" satisfies TriggerSource })
    }
  }
  for (const [builtin, standIns] of input.replacements ?? []) {
    const match = matches.get(builtin)
    if (match === undefined) continue
    for (const name of standIns) {
      if (!matches.has(name)) matches.set(name, { trigger: match.trigger, source: "replacement" satisfies TriggerSource })
    }
  }
  const allowedNames = [...matches.keys()]
  const contextTurns = Math.max(0, Math.floor(input.contextTurns))
  return allowedNames.length === 0
    ? { active: true, allowedNames: [], triggerMatchByToolName: new Map(), contextTurns, disableAllTools: true }
    : { active: true, allowedNames, triggerMatchByToolName: matches, contextTurns }
}

/**
 * What the turn may declare under its deliberate mode: everything when off, nothing when the
 * mode found no intent, else only the allowed tools. The loop applies it to `toolsForTurn`.
 */
export const applyDeliberateAllowlist = <T extends { readonly name: string }>(
  tools: ReadonlyArray<T>,
  mode: DeliberateToolMode
): ReadonlyArray<T> => {
  if (!mode.active) return tools
  if (mode.disableAllTools === true) return []
  if (mode.allowedNames.length === 0) return tools
  const allowed = new Set(mode.allowedNames)
  return tools.filter((tool) => allowed.has(tool.name))
}
