import { Context, Data, Effect, Layer } from "effect"

/** A guild member the persona may be asked to block, as the front knows them. */
export interface GuildMember {
  readonly userId: string
  /** Account name (`alice`). */
  readonly username: string
  /** Server nickname or global display name (`Alice ✿`). */
  readonly displayName: string
  readonly isBot: boolean
  /** Administrator or Manage Server: the people who manage the bot and its capabilities. */
  readonly isAdministrator: boolean
}

export type TargetLookup = Data.TaggedEnum<{
  Found: { readonly member: GuildMember }
  Ambiguous: { readonly candidates: ReadonlyArray<GuildMember> }
  NotFound: {}
}>

export const TargetLookup = Data.taggedEnum<TargetLookup>()

/** The user id in `<@123>`, `<@!123>` or a bare snowflake. */
export const mentionedUserId = (query: string): string | undefined =>
  /^(?:<@!?(\d{5,25})>|(\d{5,25}))$/.exec(query.trim())?.slice(1).find((id) => id !== undefined)

/** Names compare without case, width variants or a leading `@`. */
export const foldName = (text: string): string => text.normalize("NFKC").trim().replace(/^@/, "").toLowerCase()

/**
 * Who `query` designates among `members`: a mention or id first, then an exact (case-insensitive)
 * username or display name. Several members with that name ⇒ Ambiguous, so the persona asks
 * instead of guessing. Pure: the Discord front feeds it the guild's members.
 */
export const matchMember = (members: ReadonlyArray<GuildMember>, query: string): TargetLookup => {
  const id = mentionedUserId(query)
  if (id !== undefined) {
    const byId = members.find((member) => member.userId === id)
    return byId === undefined ? TargetLookup.NotFound() : TargetLookup.Found({ member: byId })
  }
  const wanted = foldName(query)
  if (wanted.length === 0) return TargetLookup.NotFound()
  const byName = members.filter((member) => foldName(member.username) === wanted || foldName(member.displayName) === wanted)
  const [first, ...others] = byName
  if (first === undefined) return TargetLookup.NotFound()
  return others.length === 0 ? TargetLookup.Found({ member: first }) : TargetLookup.Ambiguous({ candidates: byName })
}

/**
 * Finds the member `block_user` / `unblock_user` name. The Discord front provides the real one
 * (guild member cache or search); `fromMembers` serves tests and fronts without Discord.
 */
export class BlockTargetResolver extends Context.Service<BlockTargetResolver, {
  readonly resolve: (guildId: string, query: string) => Effect.Effect<TargetLookup>
}>()("loopcord/tools/BlockTargetResolver") {
  static readonly fromMembers = (membersByGuild: Readonly<Record<string, ReadonlyArray<GuildMember>>>) =>
    Layer.succeed(BlockTargetResolver, {
      resolve: (guildId, query) => Effect.succeed(matchMember(membersByGuild[guildId] ?? [], query))
    })
}
