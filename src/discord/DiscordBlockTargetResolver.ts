import { type GuildMember as DiscordMember, PermissionFlagsBits } from "discord.js"
import { Effect, Layer } from "effect"
import {
  BlockTargetResolver,
  foldName,
  type GuildMember,
  matchMember,
  mentionedUserId,
  TargetLookup
} from "../tools/builtin/blocking/BlockTargetResolver"
import { DiscordClient } from "./DiscordClient"

/** Candidates fetched per name search. */
const SEARCH_LIMIT = 25

const toGuildMember = (member: DiscordMember): GuildMember => ({
  userId: member.id,
  username: member.user.username,
  displayName: member.displayName,
  isBot: member.user.bot,
  isAdministrator: member.permissions.has(PermissionFlagsBits.Administrator) || member.permissions.has(PermissionFlagsBits.ManageGuild)
})

/**
 * Finds the member `block_user` / `unblock_user` name: a mention or id is fetched directly; a
 * name is searched among the guild's members (Discord's member search needs no privileged
 * intent) together with the members already cached, then matched exactly.
 */
export const DiscordBlockTargetResolver = Layer.effect(
  BlockTargetResolver,
  Effect.map(DiscordClient, (client) => ({
    resolve: (guildId: string, query: string) =>
      Effect.gen(function*() {
        const guild = client.guilds.cache.get(guildId)
        if (guild === undefined) return TargetLookup.NotFound()
        const id = mentionedUserId(query)
        if (id !== undefined) {
          return yield* Effect.tryPromise(() => guild.members.fetch(id)).pipe(
            Effect.map((member) => TargetLookup.Found({ member: toGuildMember(member) })),
            Effect.orElseSucceed(() => TargetLookup.NotFound())
          )
        }
        const searched = yield* Effect.tryPromise(() => guild.members.search({ query: foldName(query), limit: SEARCH_LIMIT })).pipe(
          Effect.map((found) => [...found.values()]),
          Effect.catch((error) => Effect.as(Effect.logWarning(`member search failed; using cached members: ${error.message}`), []))
        )
        const byId = new Map<string, DiscordMember>([...guild.members.cache.values(), ...searched].map((member) => [member.id, member]))
        return matchMember([...byId.values()].map(toGuildMember), query)
      })
  }))
)
