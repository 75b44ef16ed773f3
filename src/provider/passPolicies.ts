import { defaultPassPolicy, type PassPolicy } from "../loop/PassPolicy"
import { novelAiPassPolicy } from "./novelai/novelAiPassPolicy"

/**
 * The pass policy each provider family declares (docs/architecture.md, "Loop core and its
 * hooks"); the others get the default. Keyed by the attempt's provider name, so the policy
 * follows the attempt, whichever model serves it. Only the policies are imported here, never a
 * provider's client (providers load lazily).
 */
const declared: Readonly<Record<string, PassPolicy>> = {
  novelai: novelAiPassPolicy
}

export const passPolicyFor = (provider: string): PassPolicy => declared[provider] ?? defaultPassPolicy
