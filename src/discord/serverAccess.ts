import type { ServerSettings } from "../store/ServerSettingsStore"
import type { TriggerReason } from "./triggers"

/** Why a server's settings keep a triggering message from being answered. */
type AccessRefusal =
  /** The server turned this kind of trigger off (`/triggers`). */
  | "trigger_off"
  | "denied_user"
  | "denied_role"
  /** The server allows only some roles, and the author has none of them. */
  | "role_not_allowed"

/** Who wrote the message, as far as the server's lists care. */
interface Author {
  readonly userId: string
  readonly roleIds: ReadonlySet<string>
}

/**
 * Whether a message that triggers the bot may be answered under the server's settings (pure).
 * The trigger kinds the server turned off are ignored; then the deny lists win over the allow
 * list; an empty allow list lets every member in. DMs have no server: only the operator decides.
 */
export const serverAccess = (settings: ServerSettings, reason: TriggerReason, author: Author): AccessRefusal | undefined => {
  if (reason === "dm") return undefined
  const { access, triggers } = settings
  const enabled = reason === "mention" ? triggers.mentions : reason === "reply" ? triggers.replies : triggers.channels
  if (!enabled) return "trigger_off"
  if (access.deniedUsers.includes(author.userId)) return "denied_user"
  if (access.deniedRoles.some((role) => author.roleIds.has(role))) return "denied_role"
  if (access.allowedRoles.length > 0 && !access.allowedRoles.some((role) => author.roleIds.has(role))) return "role_not_allowed"
  return undefined
}
