import type { ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { ACCESS_LISTS, type AccessList, type ServerAccess, ServerLimits, ServerSettingsStore } from "../../store/ServerSettingsStore"
import { CommandError } from "./commandReply"
import { requireManageServer } from "./modelCommand"

const isAccessList = (name: string): name is AccessList => (ACCESS_LISTS as ReadonlyArray<string>).includes(name)

/** How many entries of a list are shown in a reply (the rest are counted). */
const SHOWN = 20

const mentionList = (ids: ReadonlyArray<string>, kind: "role" | "user") => {
  if (ids.length === 0) return "none"
  const shown = ids.slice(0, SHOWN).map((id) => (kind === "role" ? `<@&${id}>` : `<@${id}>`)).join(", ")
  return ids.length > SHOWN ? `${shown} and ${ids.length - SHOWN} more` : shown
}

export const describeAccess = (access: ServerAccess): string =>
  [
    `Allowed roles: ${access.allowedRoles.length === 0 ? "everyone" : mentionList(access.allowedRoles, "role")}`,
    `Denied roles: ${mentionList(access.deniedRoles, "role")}`,
    `Denied users: ${mentionList(access.deniedUsers, "user")}`,
    `Per-user rate: ${access.userMessagesPerMinute === 0 ? "no limit" : `${access.userMessagesPerMinute} messages per minute`}`
  ].join("\n")

const listLabel: Readonly<Record<AccessList, string>> = {
  allowed_roles: "allowed roles",
  denied_roles: "denied roles",
  denied_users: "denied users"
}

/** The role or user the subcommand names, as the list needs it. */
const targetOf = (interaction: ChatInputCommandInteraction, list: AccessList): Effect.Effect<{ readonly id: string; readonly shown: string }, CommandError> => {
  if (list === "denied_users") {
    const user = interaction.options.getUser("user")
    return user === null
      ? Effect.fail(new CommandError({ detail: "Name the user (the `user` option) for the denied users list." }))
      : Effect.succeed({ id: user.id, shown: `<@${user.id}>` })
  }
  const role = interaction.options.getRole("role")
  return role === null
    ? Effect.fail(new CommandError({ detail: `Name the role (the \`role\` option) for the ${listLabel[list]} list.` }))
    : Effect.succeed({ id: role.id, shown: `<@&${role.id}>` })
}

/**
 * `/access add|remove|rate|show`: who may trigger the bot in this server (a role allow list,
 * role and user deny lists) and how often one user may (messages per minute).
 */
export const accessCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const store = yield* ServerSettingsStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const subcommand = interaction.options.getSubcommand()
    if (subcommand === "rate") {
      const rate = interaction.options.getInteger("messages_per_minute", true)
      if (rate < 0 || rate > ServerLimits.messagesPerMinute) {
        return yield* new CommandError({ detail: `Choose 0 (no limit) to ${ServerLimits.messagesPerMinute} messages per minute.` })
      }
      yield* store.setUserRate(guildId, rate, interaction.user.id).pipe(Effect.mapError(failed))
      return rate === 0 ? "✅ No per-user limit any more." : `✅ Each member may trigger me at most ${rate} times per minute; faster messages are not answered.`
    }
    if (subcommand === "add" || subcommand === "remove") {
      const list = interaction.options.getString("list", true)
      if (!isAccessList(list)) return yield* new CommandError({ detail: `Unknown list '${list}'.` })
      const target = yield* targetOf(interaction, list)
      if (subcommand === "remove") {
        const removed = yield* store.removeAccess(guildId, list, target.id).pipe(Effect.mapError(failed))
        return removed ? `✅ ${target.shown} removed from the ${listLabel[list]}.` : `${target.shown} is not on the ${listLabel[list]}.`
      }
      const outcome = yield* store.addAccess(guildId, list, target.id, interaction.user.id).pipe(Effect.mapError(failed))
      switch (outcome) {
        case "added":
          return `✅ ${target.shown} added to the ${listLabel[list]}.`
        case "already_there":
          return `${target.shown} is already on the ${listLabel[list]}.`
        case "full":
          return yield* new CommandError({ detail: `The ${listLabel[list]} list is full (${ServerLimits.accessEntries} entries); remove some first.` })
      }
    }
    return describeAccess((yield* store.get(guildId).pipe(Effect.mapError(failed))).access)
  })
