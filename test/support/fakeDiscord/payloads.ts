/**
 * Discord API v10 object shapes the fake serves (only the fields discord.js 14 reads), and a
 * snowflake generator whose ids carry real timestamps (discord.js derives `createdAt` from them).
 */

export type JsonObject = Record<string, unknown>

const DISCORD_EPOCH = 1420070400000n
let increment = 0n

export const snowflake = (): string => {
  increment = (increment + 1n) & 0xfffn
  return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment).toString()
}

/** Permission bits used by the bot (discord-api-types PermissionFlagsBits values). */
export const Permission = {
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  ManageMessages: 1n << 13n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  ManageChannels: 1n << 4n,
  ManageGuild: 1n << 5n,
  Administrator: 1n << 3n,
  ManageWebhooks: 1n << 29n,
  UseApplicationCommands: 1n << 31n,
  SendMessagesInThreads: 1n << 38n
} as const

/** What the invite link of the README grants. */
export const botPermissions =
  Permission.ViewChannel | Permission.SendMessages | Permission.ReadMessageHistory | Permission.ManageWebhooks |
  Permission.EmbedLinks | Permission.UseApplicationCommands | Permission.SendMessagesInThreads

export interface FakeUser {
  readonly id: string
  readonly username: string
  readonly bot?: boolean
  /** Holds the guild's Admin role (Administrator). */
  readonly admin?: boolean
}

export const userPayload = (user: FakeUser): JsonObject => ({
  id: user.id,
  username: user.username,
  global_name: user.username,
  discriminator: "0",
  avatar: null,
  bot: user.bot ?? false
})

export type ChannelKind = "text" | "thread" | "dm"

export interface FakeChannel {
  readonly id: string
  readonly kind: ChannelKind
  readonly name: string
  readonly guildId: string | undefined
  /** Threads: the channel the thread lives in (webhooks belong to it). */
  readonly parentId: string | undefined
  /** DMs: the other user. */
  readonly recipient: FakeUser | undefined
  deleted: boolean
  /** 50001 Missing Access on every request. */
  noAccess: boolean
  /** 50013 Missing Permissions on webhook creation. */
  noWebhooks: boolean
  /** The newest message posted in it (Discord's `last_message_id`), if any. */
  lastMessageId?: string | undefined
}

const channelType = (kind: ChannelKind) => (kind === "text" ? 0 : kind === "thread" ? 11 : 1)

export const channelPayload = (channel: FakeChannel): JsonObject => {
  const base: JsonObject = { id: channel.id, type: channelType(channel.kind), name: channel.name, last_message_id: channel.lastMessageId ?? null }
  if (channel.kind === "dm") return { ...base, recipients: channel.recipient === undefined ? [] : [userPayload(channel.recipient)] }
  const guildFields = { ...base, guild_id: channel.guildId, position: 0, permission_overwrites: [], nsfw: false, rate_limit_per_user: 0 }
  if (channel.kind === "thread") {
    return {
      ...guildFields,
      parent_id: channel.parentId,
      owner_id: "1",
      member_count: 1,
      message_count: 0,
      thread_metadata: { archived: false, auto_archive_duration: 60, locked: false, archive_timestamp: new Date().toISOString() }
    }
  }
  return { ...guildFields, parent_id: null, topic: null }
}

export interface FakeSticker {
  readonly id: string
  readonly name: string
}

export interface FakeGuild {
  readonly id: string
  readonly name: string
  readonly ownerId: string
  readonly botRoleId: string
  readonly adminRoleId: string
  readonly botPermissions: bigint
  readonly stickers: ReadonlyArray<FakeSticker>
  /** Roles a test added (`FakeDiscord.addRole`), besides @everyone, the bot's and Admin. */
  readonly roles: Array<FakeRole>
  /** Extra roles, emojis and members in GUILD_CREATE (a realistically sized guild, for memory benches). */
  readonly filler?: { readonly roles: number; readonly emojis: number; readonly members: number }
}

/** The filler of a realistically sized guild: roles, custom emojis and members as Discord sends them. */
const fillerPayload = (guild: FakeGuild) => {
  const filler = guild.filler ?? { roles: 0, emojis: 0, members: 0 }
  const id = (kind: number, i: number) => (BigInt(guild.id) + BigInt(kind * 100_000 + i + 1)).toString()
  return {
    roles: Array.from({ length: filler.roles }, (_, i) => ({
      id: id(1, i), name: `role-${i}`, permissions: "104324673", position: 3 + i, color: 0x3498db, hoist: i < 3, managed: false, mentionable: true, flags: 0,
      icon: null, unicode_emoji: null, description: null
    })),
    emojis: Array.from({ length: filler.emojis }, (_, i) => ({
      id: id(2, i), name: `emoji_${i}`, roles: [], require_colons: true, managed: false, animated: i % 5 === 0, available: true
    })),
    members: Array.from({ length: filler.members }, (_, i) => ({
      user: { id: id(3, i), username: `member${i}`, global_name: `Member ${i}`, discriminator: "0", avatar: "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6", bot: false },
      roles: [id(1, i % Math.max(1, filler.roles))].slice(0, filler.roles === 0 ? 0 : 1),
      nick: i % 4 === 0 ? `nick ${i}` : null, avatar: null, joined_at: "2024-01-01T00:00:00.000Z", deaf: false, mute: false, flags: 0, pending: false
    }))
  }
}

export interface FakeRole {
  readonly id: string
  readonly name: string
}

export const rolePayload = (role: FakeRole, position: number): JsonObject => ({
  id: role.id, name: role.name, permissions: "0", position, color: 0, hoist: false, managed: false, mentionable: false, flags: 0
})

export const guildCreatePayload = (guild: FakeGuild, bot: FakeUser, channels: ReadonlyArray<FakeChannel>): JsonObject => ({
  id: guild.id,
  name: guild.name,
  icon: null,
  owner_id: guild.ownerId,
  unavailable: false,
  large: false,
  member_count: 2,
  joined_at: new Date().toISOString(),
  afk_timeout: 300,
  verification_level: 0,
  default_message_notifications: 0,
  explicit_content_filter: 0,
  mfa_level: 0,
  nsfw_level: 0,
  premium_tier: 0,
  preferred_locale: "en-US",
  system_channel_flags: 0,
  features: [],
  roles: [
    { id: guild.id, name: "@everyone", permissions: (Permission.ViewChannel | Permission.SendMessages | Permission.ReadMessageHistory | Permission.UseApplicationCommands).toString(), position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
    { id: guild.botRoleId, name: "loopcord", permissions: guild.botPermissions.toString(), position: 1, color: 0, hoist: false, managed: true, mentionable: false, flags: 0, tags: { bot_id: bot.id } },
    { id: guild.adminRoleId, name: "Admin", permissions: Permission.Administrator.toString(), position: 2, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
    ...guild.roles.map((role, index) => rolePayload(role, 3 + index)),
    ...fillerPayload(guild).roles
  ],
  channels: channels.filter((channel) => channel.kind === "text").map(channelPayload),
  threads: channels.filter((channel) => channel.kind === "thread").map(channelPayload),
  members: [{ user: userPayload(bot), roles: [guild.botRoleId], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 }, ...fillerPayload(guild).members],
  emojis: fillerPayload(guild).emojis,
  stickers: guild.stickers.map((sticker) => ({
    id: sticker.id,
    name: sticker.name,
    tags: sticker.name,
    type: 2,
    format_type: 1,
    available: true,
    guild_id: guild.id,
    description: null
  })),
  voice_states: [],
  presences: [],
  stage_instances: [],
  guild_scheduled_events: [],
  soundboard_sounds: []
})

/** A guild member object for `user` (the Admin role when the user is an admin). */
export const memberPayload = (guild: FakeGuild, user: FakeUser, withUser: boolean, roleIds: ReadonlyArray<string> = []): JsonObject => ({
  ...(withUser ? { user: userPayload(user) } : {}),
  roles: [...(user.admin === true ? [guild.adminRoleId] : []), ...roleIds],
  nick: null,
  avatar: null,
  joined_at: new Date().toISOString(),
  deaf: false,
  mute: false,
  flags: 0,
  pending: false
})

export interface StoredMessage {
  readonly id: string
  readonly channelId: string
  readonly guildId: string | undefined
  readonly author: FakeUser
  content: string
  embeds: ReadonlyArray<JsonObject>
  readonly attachments: ReadonlyArray<JsonObject>
  readonly mentions: ReadonlyArray<FakeUser>
  readonly replyTo: string | undefined
  readonly webhookId: string | undefined
  readonly stickerIds: ReadonlyArray<string>
  /** Message flags as created (IS_VOICE_MESSAGE = 1 << 13). */
  readonly flags?: number
  /** Action rows (buttons) as last set. */
  components?: ReadonlyArray<JsonObject>
  readonly createdAt: string
  editedAt: string | undefined
  /** Every content the message had, in order (first = as created). */
  readonly history: Array<string>
  deleted: boolean
}

export const messagePayload = (message: StoredMessage, referenced?: StoredMessage): JsonObject => ({
  id: message.id,
  channel_id: message.channelId,
  ...(message.guildId === undefined ? {} : { guild_id: message.guildId }),
  author: userPayload(message.author),
  content: message.content,
  timestamp: message.createdAt,
  edited_timestamp: message.editedAt ?? null,
  tts: false,
  mention_everyone: false,
  mentions: message.mentions.map(userPayload),
  mention_roles: [],
  attachments: message.attachments,
  embeds: message.embeds,
  pinned: false,
  type: message.replyTo === undefined ? 0 : 19,
  flags: message.flags ?? 0,
  components: message.components ?? [],
  ...(message.webhookId === undefined ? {} : { webhook_id: message.webhookId }),
  ...(message.stickerIds.length === 0 ? {} : { sticker_items: message.stickerIds.map((id) => ({ id, name: "sticker", format_type: 1 })) }),
  ...(message.replyTo === undefined
    ? {}
    : {
      message_reference: { type: 0, message_id: message.replyTo, channel_id: message.channelId, ...(message.guildId === undefined ? {} : { guild_id: message.guildId }) },
      ...(referenced === undefined ? {} : { referenced_message: messagePayload(referenced) })
    })
})
