import { EventEmitter } from "node:events"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { randomBytes } from "node:crypto"
import { WebSocketServer, type WebSocket } from "ws"
import { sniffImage } from "../../../src/media/imageFormat"
import { parseMultipart } from "../multipart"
import {
  botPermissions,
  channelPayload,
  type ChannelKind,
  type FakeChannel,
  type FakeGuild,
  type FakeRole,
  type FakeSticker,
  type FakeUser,
  guildCreatePayload,
  type JsonObject,
  memberPayload,
  messagePayload,
  rolePayload,
  snowflake,
  type StoredMessage,
  userPayload
} from "./payloads"

/**
 * A fake Discord on 127.0.0.1 that a real discord.js 14 Client logs into: the REST routes a
 * streaming bot calls (messages, typing, webhooks, interactions, command registration) over
 * an in-memory store, and gateway v10 over ws (HELLO, IDENTIFY → READY + GUILD_CREATE,
 * heartbeats, RESUME, dispatches). Every request is recorded for assertions; faults (429 with
 * real rate-limit headers, Discord error codes) can be scripted. Test support only.
 */

export interface FakeDiscordOptions {
  /** The token the fake accepts (`Authorization: Bot <token>` and IDENTIFY). */
  readonly token?: string
  readonly heartbeatIntervalMs?: number
  /** Close the gateway with this code when the client identifies (4014 disallowed intents, 4004 bad token). */
  readonly closeOnIdentify?: number
  /** Per-channel message bucket: at most `limit` message writes per `windowMs`, with real headers. */
  readonly messageBucket?: { readonly limit: number; readonly windowMs: number }
  /**
   * Discord's global limit: at most `perSecond` REST requests of the bot in any one second
   * (interaction responses not counted, as on Discord); beyond, 429 with `X-RateLimit-Global`
   * and `"global": true`. Off unless set (Discord's is 50).
   */
  readonly globalLimit?: { readonly perSecond: number }
  readonly shards?: number
  readonly stickers?: ReadonlyArray<FakeSticker>
  /** Permissions of the bot's role in the default guild. */
  readonly botPermissions?: bigint
  /** The default guild's id (a second fake with the same id plays the same server after a restart). */
  readonly guildId?: string
}

export interface RecordedRequest {
  readonly method: string
  /** Path after `/api/v10`, percent-decoded (`@original`). */
  readonly path: string
  readonly query: URLSearchParams
  readonly body: JsonObject | undefined
  /** File parts of a multipart upload (`files[n]`), as received. */
  readonly files: ReadonlyArray<UploadedFile>
  readonly authorization: string | undefined
  readonly at: number
  status: number
  /** When the response was sent. */
  doneAt: number
}

/** One file part of a multipart message upload. */
export interface UploadedFile {
  /** The form field, `files[0]`, `files[1]` … */
  readonly field: string
  readonly filename: string | undefined
  readonly contentType: string | undefined
  readonly data: Buffer
}

/** A file given to `userSays`: served by the fake's CDN route like a real attachment. */
export interface FakeAttachmentFile {
  readonly data: Uint8Array
  readonly filename: string
  readonly contentType: string
}

/** Discord's message flag for voice messages. */
export const IS_VOICE_MESSAGE = 1 << 13

/**
 * A scripted answer for the next matching request(s) instead of the normal one. The world stays
 * consistent with what Discord said: a 10008 on a message path deletes that message, a 10015 on
 * a webhook path deletes that webhook (its messages stay), so later requests see the same.
 */
export interface FaultRule {
  readonly method?: string
  readonly path: RegExp
  /** HTTP status (400, 403, 404 with a code; 500/502/503 for a server error; 429 rate limit). */
  readonly status: number
  /** Discord JSON error code (10008 Unknown Message, 30046 too old to edit, 10015 Unknown Webhook, 50013 Missing Permissions …). */
  readonly code?: number
  /** For 429: seconds in `Retry-After` / `X-RateLimit-Reset-After`. */
  readonly retryAfter?: number
  /** Matching requests answered normally before this rule applies (default 0): refuse the 3rd edit with `skip: 2`. */
  skip?: number
  /** The request takes effect and only its answer is the fault (a response lost on the way back). */
  readonly applied?: boolean
  /** How many matching requests get this answer (default 1). */
  times?: number
  /** No answer at all: the connection is cut once the request is read (a network failure; `status` is ignored). */
  readonly cutConnection?: boolean
  /** No answer ever: the request is read and left open (a stalled Discord; `status` is ignored). */
  readonly hang?: boolean
}

export interface FakeWebhook {
  readonly id: string
  readonly token: string
  readonly channelId: string
  readonly name: string
  deleted: boolean
}

export interface FakeInteraction {
  readonly id: string
  readonly token: string
  readonly channelId: string
  readonly name: string
  /** Interaction callback bodies in order (type 4 reply, 5 deferred …). */
  readonly callbacks: Array<JsonObject>
  original: StoredMessage | undefined
  readonly followUps: Array<StoredMessage>
  /** A button press: the message the button is on (an update callback edits it). */
  readonly messageId?: string
}

/** A slash or autocomplete option value: plain, or a role or user (sent with its resolved object, as Discord does). */
export type FakeOptionValue = string | number | boolean | { readonly role: FakeRole } | { readonly user: FakeUser }

interface GatewaySession {
  readonly id: string
  socket: WebSocket
  seq: number
  readonly shard: readonly [number, number]
  readonly intents: number
}

const API_PREFIX = "/api/v10"

const discordError = (status: number, code: number, message: string) => ({ status, body: { message, code } })

export class FakeDiscord {
  readonly token: string
  readonly bot: FakeUser
  readonly applicationId: string
  readonly guild: FakeGuild
  /** The default guild text channel `#general`. */
  readonly channel: FakeChannel
  readonly requests: Array<RecordedRequest> = []
  readonly identifies: Array<JsonObject> = []
  /** RESUME requests answered with RESUMED. */
  resumes = 0
  /** While set, every IDENTIFY is answered by closing the gateway with this code (a shard that cannot log in). */
  refuseIdentify: number | undefined = undefined
  readonly registeredCommands = new Map<string, ReadonlyArray<JsonObject>>()

  private readonly guilds: Array<FakeGuild> = []
  private readonly channels = new Map<string, FakeChannel>()
  private readonly messagesById = new Map<string, StoredMessage>()
  private readonly webhooksById = new Map<string, FakeWebhook>()
  private readonly interactionsByToken = new Map<string, FakeInteraction>()
  private readonly users = new Map<string, FakeUser>()
  /** Role ids each user holds (`giveRole`). */
  private readonly memberRoles = new Map<string, ReadonlyArray<string>>()
  private readonly sessions = new Map<string, GatewaySession>()
  private readonly faults: Array<FaultRule> = []
  /** Attachment bytes by CDN path (`/attachments/<channel>/<id>/<name>`). */
  private readonly cdn = new Map<string, { readonly data: Buffer; readonly contentType: string }>()
  /** `channelId nonce` → the message created with it (enforce_nonce). */
  private readonly nonces = new Map<string, string>()
  private readonly buckets = new Map<string, { count: number; resetAt: number }>()
  /** Arrival times of the requests the global limit counts, within the last second. */
  private globalWindow: Array<number> = []
  /** Paths of the attachment downloads (CDN and media proxy) asked for, in order. */
  readonly cdnRequests: Array<string> = []
  /** 429s answered, by scope (global: the bot's global limit; route: a per-route bucket or a scripted 429). */
  readonly rateLimited = { global: 0, route: 0 }
  private readonly changes = new EventEmitter()
  private readonly sockets = new Set<WebSocket>()
  /** While set, the gateway drops every connection as it opens (a network outage). */
  private gatewayOutage = false
  private server!: Server
  private wss!: WebSocketServer
  private port = 0

  private constructor(private readonly options: FakeDiscordOptions) {
    this.token = options.token ?? "fake-bot-token"
    this.bot = { id: snowflake(), username: "loopcord", bot: true }
    this.applicationId = this.bot.id
    this.guild = this.addGuild("Test Guild", options.stickers ?? [], options.botPermissions ?? botPermissions, options.guildId)
    this.channel = this.addChannel({ kind: "text", name: "general", guildId: this.guild.id })
    this.changes.setMaxListeners(100)
  }

  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options)
    await fake.listen()
    return fake
  }

  /** Gateway WebSockets open now (every logged-in shard holds one). */
  get gatewayConnections(): number {
    return this.sockets.size
  }

  get apiBase(): string {
    return `http://127.0.0.1:${this.port}/api`
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`
  }

  /**
   * Where the fake's media proxy would serve what users post (Discord's is `media.discordapp.net`):
   * the `proxy_url` of attachments. On loopback, so nothing reaches out even if a test fetches it.
   */
  get mediaProxyBase(): string {
    return `http://127.0.0.1:${this.port}/media-proxy`
  }

  // ---------------------------------------------------------------- world building

  addGuild(name: string, stickers: ReadonlyArray<FakeSticker> = [], permissions: bigint = botPermissions, id: string = snowflake(), filler?: FakeGuild["filler"]): FakeGuild {
    const guild: FakeGuild = {
      id, name, ownerId: snowflake(), botRoleId: snowflake(), adminRoleId: snowflake(), botPermissions: permissions, stickers, roles: [],
      ...(filler === undefined ? {} : { filler })
    }
    this.guilds.push(guild)
    // A guild added once the bot is online joins it at once (as when the bot is invited).
    if (this.sessions.size > 0) {
      const channels = [...this.channels.values()].filter((channel) => channel.guildId === guild.id && !channel.deleted)
      this.dispatch("GUILD_CREATE", guildCreatePayload(guild, this.bot, channels), guild.id)
    }
    return guild
  }

  addChannel(spec: {
    readonly kind: ChannelKind
    readonly name: string
    readonly guildId?: string
    readonly parentId?: string
    readonly recipient?: FakeUser
    /** Announce a text channel to a connected client (CHANNEL_CREATE) at once (default true). */
    readonly announce?: boolean
  }): FakeChannel {
    const channel: FakeChannel = {
      id: snowflake(),
      kind: spec.kind,
      name: spec.name,
      guildId: spec.kind === "dm" ? undefined : spec.guildId ?? this.guild.id,
      parentId: spec.parentId,
      recipient: spec.recipient,
      deleted: false,
      noAccess: false,
      noWebhooks: false
    }
    this.channels.set(channel.id, channel)
    if (channel.kind === "text" && channel.guildId !== undefined && this.sessions.size > 0 && spec.announce !== false) {
      this.dispatch("CHANNEL_CREATE", channelPayload(channel), channel.guildId)
    }
    return channel
  }

  /** A thread under `parent`, announced to a connected client with THREAD_CREATE. */
  addThread(parent: FakeChannel, name: string): FakeChannel {
    const thread = this.addChannel({ kind: "thread", name, ...(parent.guildId === undefined ? {} : { guildId: parent.guildId }), parentId: parent.id })
    this.dispatch("THREAD_CREATE", { ...channelPayload(thread), newly_created: true }, thread.guildId)
    return thread
  }

  dmChannel(user: FakeUser): FakeChannel {
    const existing = [...this.channels.values()].find((channel) => channel.kind === "dm" && channel.recipient?.id === user.id)
    return existing ?? this.addChannel({ kind: "dm", name: user.username, recipient: user })
  }

  /** A role of `guild`, announced to a connected client with GUILD_ROLE_CREATE. */
  addRole(name: string, guild: FakeGuild = this.guild): FakeRole {
    const role: FakeRole = { id: snowflake(), name }
    guild.roles.push(role)
    this.dispatch("GUILD_ROLE_CREATE", { guild_id: guild.id, role: rolePayload(role, 2 + guild.roles.length) }, guild.id)
    return role
  }

  /** `user` holds `role` from now on (their later messages carry it). */
  giveRole(user: FakeUser, role: FakeRole): void {
    this.memberRoles.set(user.id, [...(this.memberRoles.get(user.id) ?? []), role.id])
  }

  user(username: string, options: { readonly bot?: boolean; readonly admin?: boolean } = {}): FakeUser {
    const existing = this.users.get(username)
    if (existing !== undefined) return existing
    const user: FakeUser = { id: snowflake(), username, bot: options.bot ?? false, admin: options.admin ?? false }
    this.users.set(username, user)
    return user
  }

  getChannel(id: string): FakeChannel {
    const channel = this.channels.get(id)
    if (channel === undefined) throw new Error(`no channel ${id}`)
    return channel
  }

  // ---------------------------------------------------------------- driving the bot

  /**
   * A user posts in `channel`; the message is stored and dispatched as MESSAGE_CREATE.
   * Attachments are given by their original (CDN) `url`; their `proxy_url` is the fake's media
   * proxy unless `proxyUrl` says otherwise. `embeds` are API embed objects as Discord sends them
   * (for instance `{ type: "image", url, thumbnail: { url, proxy_url, width, height } }`).
   */
  userSays(
    channel: FakeChannel,
    content: string,
    options: {
      readonly author?: FakeUser
      readonly mentionBot?: boolean
      readonly replyTo?: string
      readonly attachments?: ReadonlyArray<{
        readonly url: string
        readonly contentType: string
        readonly filename?: string
        readonly proxyUrl?: string
        readonly size?: number
      }>
      readonly embeds?: ReadonlyArray<JsonObject>
      /** Files uploaded with the message: served by the fake's CDN and media proxy like real attachments. */
      readonly files?: ReadonlyArray<FakeAttachmentFile>
    } = {}
  ): StoredMessage {
    const author = options.author ?? this.user("alice")
    const text = options.mentionBot === true ? `<@${this.bot.id}> ${content}` : content
    const message = this.storeMessage({
      channel,
      author,
      content: text,
      mentions: options.mentionBot === true ? [this.bot] : [],
      replyTo: options.replyTo,
      ...(options.embeds === undefined ? {} : { embeds: options.embeds }),
      attachments: (options.attachments ?? []).map((attachment): JsonObject => {
        const id = snowflake()
        const filename = attachment.filename ?? "image.png"
        return {
          id,
          filename,
          size: attachment.size ?? 1024,
          url: attachment.url,
          proxy_url: attachment.proxyUrl ?? `${this.mediaProxyBase}/attachments/${channel.id}/${id}/${filename}`,
          content_type: attachment.contentType,
          width: 64,
          height: 64
        }
      }).concat((options.files ?? []).map((file) => this.storeAttachment(channel.id, {
        filename: file.filename,
        contentType: file.contentType,
        data: Buffer.from(file.data)
      }, {})))
    })
    return message
  }

  /**
   * A message that was posted before the bot connected: stored (REST sees it) but never
   * dispatched, so the client has to fetch it. `replyTo` makes it a reply.
   */
  seedMessage(channel: FakeChannel, content: string, options: { readonly author?: FakeUser; readonly replyTo?: string } = {}): StoredMessage {
    const message: StoredMessage = {
      id: snowflake(),
      channelId: channel.id,
      guildId: channel.guildId,
      author: options.author ?? this.user("alice"),
      content,
      embeds: [],
      attachments: [],
      mentions: [],
      replyTo: options.replyTo,
      webhookId: undefined,
      stickerIds: [],
      createdAt: new Date().toISOString(),
      editedAt: undefined,
      history: [content],
      deleted: false
    }
    this.messagesById.set(message.id, message)
    channel.lastMessageId = message.id
    return message
  }

  /** The bytes behind an attachment URL (or media proxy URL) of this fake. */
  attachmentData(url: string): Buffer | undefined {
    return this.cdn.get(cdnPath(new URL(url).pathname))?.data
  }

  /** Another integration's webhook (not the bot's) posts in `channel`. */
  webhookSays(channel: FakeChannel, content: string, options: { readonly webhookId?: string; readonly username?: string } = {}): StoredMessage {
    const webhookId = options.webhookId ?? snowflake()
    return this.storeMessage({ channel, author: { id: webhookId, username: options.username ?? "Other Integration", bot: true }, content, webhookId })
  }

  /** A slash command; the interaction is dispatched and returned for checking its responses. */
  slash(
    name: string,
    options: {
      readonly channel?: FakeChannel
      readonly user?: FakeUser
      readonly subcommand?: string
      readonly options?: Readonly<Record<string, FakeOptionValue>>
      /** Member permissions (default: none beyond @everyone). */
      readonly permissions?: bigint
    } = {}
  ): FakeInteraction {
    return this.commandInteraction(2, name, options, undefined)
  }

  /** The user types in option `focused` of a command: an autocomplete interaction (its answer is the type 8 callback). */
  autocomplete(
    name: string,
    focused: string,
    options: {
      readonly channel?: FakeChannel
      readonly user?: FakeUser
      readonly subcommand?: string
      readonly options?: Readonly<Record<string, FakeOptionValue>>
      readonly permissions?: bigint
    } = {}
  ): FakeInteraction {
    return this.commandInteraction(4, name, options, focused)
  }

  /** The choices the bot answered an autocomplete with. */
  autocompleteChoices(interaction: FakeInteraction): ReadonlyArray<{ readonly name: string; readonly value: unknown }> | undefined {
    const callback = interaction.callbacks.find((body) => body["type"] === 8)
    return (callback?.["data"] as { choices?: ReadonlyArray<{ name: string; value: unknown }> } | undefined)?.choices
  }

  /** A member presses the button `customId` on `message` (a component interaction). */
  pressButton(
    message: StoredMessage,
    customId: string,
    options: { readonly user?: FakeUser; readonly permissions?: bigint } = {}
  ): FakeInteraction {
    const channel = this.getChannel(message.channelId)
    const user = options.user ?? this.user("alice")
    const interaction: FakeInteraction = {
      id: snowflake(),
      token: randomBytes(16).toString("hex"),
      channelId: channel.id,
      name: customId,
      callbacks: [],
      original: undefined,
      followUps: [],
      messageId: message.id
    }
    this.interactionsByToken.set(interaction.token, interaction)
    this.dispatch("INTERACTION_CREATE", {
      ...this.interactionEnvelope(interaction, channel, user, options.permissions ?? 0n),
      type: 3,
      message: this.payloadOf(message),
      data: { custom_id: customId, component_type: 2 }
    }, channel.guildId)
    return interaction
  }

  private interactionEnvelope(interaction: FakeInteraction, channel: FakeChannel, user: FakeUser, permissions: bigint): JsonObject {
    return {
      id: interaction.id,
      application_id: this.applicationId,
      token: interaction.token,
      version: 1,
      channel_id: channel.id,
      channel: channelPayload(channel),
      ...(channel.guildId === undefined
        ? { user: userPayload(user), context: 1 }
        : {
          guild_id: channel.guildId,
          guild_locale: "en-US",
          member: { user: userPayload(user), roles: this.memberRoles.get(user.id) ?? [], permissions: permissions.toString(), joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0, nick: null, avatar: null, pending: false },
          context: 0
        }),
      app_permissions: botPermissions.toString(),
      locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": channel.guildId ?? "0" }
    }
  }

  private commandInteraction(
    type: 2 | 4,
    name: string,
    options: {
      readonly channel?: FakeChannel
      readonly user?: FakeUser
      readonly subcommand?: string
      readonly options?: Readonly<Record<string, FakeOptionValue>>
      readonly permissions?: bigint
    },
    focused: string | undefined
  ): FakeInteraction {
    const channel = options.channel ?? this.channel
    const user = options.user ?? this.user("alice")
    const interaction: FakeInteraction = { id: snowflake(), token: randomBytes(16).toString("hex"), channelId: channel.id, name, callbacks: [], original: undefined, followUps: [] }
    this.interactionsByToken.set(interaction.token, interaction)
    const roles: Record<string, JsonObject> = {}
    const users: Record<string, JsonObject> = {}
    const guild = this.guilds.find((candidate) => candidate.id === channel.guildId)
    const values = Object.entries(options.options ?? {}).map(([optionName, value]) => {
      const isFocused = optionName === focused ? { focused: true } : {}
      if (typeof value === "object" && "role" in value) {
        roles[value.role.id] = rolePayload(value.role, 3)
        return { name: optionName, type: 8, value: value.role.id, ...isFocused }
      }
      if (typeof value === "object" && "user" in value) {
        users[value.user.id] = userPayload(value.user)
        return { name: optionName, type: 6, value: value.user.id, ...isFocused }
      }
      return { name: optionName, type: typeof value === "string" ? 3 : typeof value === "number" ? 4 : 5, value, ...isFocused }
    })
    const commandOptions = options.subcommand === undefined ? values : [{ name: options.subcommand, type: 1, options: values }]
    const registered = [...this.registeredCommands.values()].flat().find((command) => command["name"] === name)
    const resolved = {
      ...(Object.keys(roles).length === 0 ? {} : { roles }),
      ...(Object.keys(users).length === 0 ? {} : {
        users,
        ...(guild === undefined ? {} : { members: Object.fromEntries(Object.entries(users).map(([id]) => [id, { roles: this.memberRoles.get(id) ?? [], joined_at: new Date().toISOString(), permissions: "0", flags: 0 }])) })
      })
    }
    this.dispatch("INTERACTION_CREATE", {
      ...this.interactionEnvelope(interaction, channel, user, options.permissions ?? 0n),
      type,
      data: {
        id: typeof registered?.["id"] === "string" ? registered["id"] : snowflake(),
        name,
        type: 1,
        options: commandOptions,
        ...(Object.keys(resolved).length === 0 ? {} : { resolved })
      }
    }, channel.guildId)
    return interaction
  }

  /** Sends a dispatch to every identified session of the shard that owns `guildId`. */
  dispatch(type: string, data: JsonObject, guildId?: string): void {
    for (const session of this.sessions.values()) {
      if (!this.ownsGuild(session, guildId)) continue
      session.seq += 1
      session.socket.send(JSON.stringify({ op: 0, t: type, s: session.seq, d: data }))
    }
    this.changed()
  }

  /** Closes every gateway socket with `code` (4000 makes the client resume). */
  closeGateway(code: number): void {
    for (const socket of this.sockets) socket.close(code, "closed by the fake")
  }

  /** An outage: every gateway connection drops, and new ones drop as they open, until `restoreGateway`. */
  interruptGateway(): void {
    this.gatewayOutage = true
    for (const socket of this.sockets) socket.terminate()
  }

  restoreGateway(): void {
    this.gatewayOutage = false
  }

  /** Scripts `rule`; returns the live rule (its `times` counts down as it fires; set it to 0 to withdraw it). */
  failNext(rule: FaultRule): FaultRule {
    const live = { ...rule, skip: rule.skip ?? 0, times: rule.times ?? 1 }
    this.faults.push(live)
    return live
  }

  /** Faults scripted with `failNext` that have not fired yet (all of their `times`). */
  get pendingFaults(): number {
    return this.faults.reduce((sum, rule) => sum + (rule.times ?? 0), 0)
  }

  deleteWebhook(id: string): void {
    const webhook = this.webhooksById.get(id)
    if (webhook !== undefined) webhook.deleted = true
  }

  // ---------------------------------------------------------------- inspecting

  /** Messages of a channel, oldest first, deleted ones left out. */
  messages(channelId: string): ReadonlyArray<StoredMessage> {
    return [...this.messagesById.values()].filter((message) => message.channelId === channelId && !message.deleted)
  }

  /** Messages the bot (or its webhooks) posted in a channel, oldest first. */
  botMessages(channelId: string): ReadonlyArray<StoredMessage> {
    return this.messages(channelId).filter((message) => message.author.id === this.bot.id || message.webhookId !== undefined)
  }

  message(id: string): StoredMessage | undefined {
    return this.messagesById.get(id)
  }

  webhooks(channelId: string): ReadonlyArray<FakeWebhook> {
    return [...this.webhooksById.values()].filter((webhook) => webhook.channelId === channelId && !webhook.deleted)
  }

  interaction(token: string): FakeInteraction | undefined {
    return this.interactionsByToken.get(token)
  }

  requestsTo(method: string, path: RegExp): ReadonlyArray<RecordedRequest> {
    return this.requests.filter((request) => request.method === method && path.test(request.path))
  }

  /** Resolves once `predicate` holds (checked after every request and dispatch, and every 10 ms for client-side state). */
  waitFor(predicate: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return
        cleanup()
        resolve()
      }
      const poll = setInterval(check, 10)
      const timer = setTimeout(() => {
        cleanup()
        const recent = this.requests.slice(-15).map((request) => `${request.method} ${request.path} → ${request.status}`).join("\n  ")
        reject(new Error(`fake Discord: timed out after ${timeoutMs} ms waiting for ${what}; last requests:\n  ${recent}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        clearInterval(poll)
        this.changes.off("change", check)
      }
      this.changes.on("change", check)
    })
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate()
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  // ---------------------------------------------------------------- internals

  private changed(): void {
    this.changes.emit("change")
  }

  private ownsGuild(session: GatewaySession, guildId: string | undefined): boolean {
    const [shardId, shardCount] = session.shard
    if (guildId === undefined) return shardId === 0
    return Number((BigInt(guildId) >> 22n) % BigInt(shardCount)) === shardId
  }

  private storeMessage(spec: {
    readonly channel: FakeChannel
    readonly author: FakeUser
    readonly content: string
    readonly embeds?: ReadonlyArray<JsonObject>
    readonly mentions?: ReadonlyArray<FakeUser>
    readonly replyTo?: string | undefined
    readonly attachments?: ReadonlyArray<JsonObject>
    readonly webhookId?: string
    readonly stickerIds?: ReadonlyArray<string>
    readonly flags?: number
    readonly components?: ReadonlyArray<JsonObject>
  }): StoredMessage {
    const message: StoredMessage = {
      ...(spec.flags === undefined || spec.flags === 0 ? {} : { flags: spec.flags }),
      ...(spec.components === undefined || spec.components.length === 0 ? {} : { components: spec.components }),
      id: snowflake(),
      channelId: spec.channel.id,
      guildId: spec.channel.guildId,
      author: spec.author,
      content: spec.content,
      embeds: spec.embeds ?? [],
      attachments: spec.attachments ?? [],
      mentions: spec.mentions ?? [],
      replyTo: spec.replyTo,
      webhookId: spec.webhookId,
      stickerIds: spec.stickerIds ?? [],
      createdAt: new Date().toISOString(),
      editedAt: undefined,
      history: [spec.content],
      deleted: false
    }
    this.messagesById.set(message.id, message)
    spec.channel.lastMessageId = message.id
    // Discord adds `channel_type` to MESSAGE_CREATE; discord.js needs it to build DM channels.
    const channelType = spec.channel.kind === "text" ? 0 : spec.channel.kind === "thread" ? 11 : 1
    this.dispatch("MESSAGE_CREATE", { ...this.payloadOf(message), channel_type: channelType }, message.guildId)
    return message
  }

  private payloadOf(message: StoredMessage): JsonObject {
    const referenced = message.replyTo === undefined ? undefined : this.messagesById.get(message.replyTo)
    const guild = this.guilds.find((candidate) => candidate.id === message.guildId)
    return {
      ...messagePayload(message, referenced),
      ...(guild === undefined || message.webhookId !== undefined ? {} : { member: memberPayload(guild, message.author, false, this.memberRoles.get(message.author.id) ?? []) })
    }
  }

  /** Stores an uploaded file on the fake CDN and returns its attachment object. */
  private storeAttachment(
    channelId: string,
    file: { readonly filename: string; readonly contentType: string; readonly data: Buffer },
    meta: JsonObject
  ): JsonObject {
    const id = snowflake()
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(file.filename)}`
    this.cdn.set(path, { data: file.data, contentType: file.contentType })
    const url = `http://127.0.0.1:${this.port}${path}`
    const proxyUrl = `${this.mediaProxyBase}${path}`
    const image = sniffImage(file.data)
    return {
      id,
      filename: file.filename,
      size: file.data.length,
      url,
      proxy_url: proxyUrl,
      content_type: file.contentType,
      ...(image?.width === undefined ? {} : { width: image.width, height: image.height }),
      ...(typeof meta["duration_secs"] === "number" ? { duration_secs: meta["duration_secs"] } : {}),
      ...(typeof meta["waveform"] === "string" ? { waveform: meta["waveform"] } : {}),
      ...(typeof meta["description"] === "string" ? { description: meta["description"] } : {})
    }
  }

  /**
   * The attachments of a create-message upload, checked as Discord does: every `files[n]` part
   * is described by an `attachments` entry with id n; a voice message (IS_VOICE_MESSAGE) has no
   * text, exactly one audio/ogg file, and its `duration_secs` and `waveform`.
   */
  private uploadedAttachments(request: RecordedRequest, channelId: string): { readonly attachments: ReadonlyArray<JsonObject> } | { status: number; body: unknown } {
    const described = Array.isArray(request.body?.["attachments"]) ? request.body["attachments"] as ReadonlyArray<JsonObject> : []
    const attachments: Array<JsonObject> = []
    for (const file of request.files) {
      const index = /^files\[(\d+)\]$/.exec(file.field)?.[1]
      const meta = described.find((entry) => String(entry["id"]) === index)
      if (index === undefined || meta === undefined || file.filename === undefined) {
        return discordError(400, 50035, `Invalid Form Body (attachments: no entry for ${file.field})`)
      }
      attachments.push(this.storeAttachment(channelId, {
        filename: typeof meta["filename"] === "string" ? meta["filename"] : file.filename,
        contentType: file.contentType ?? "application/octet-stream",
        data: file.data
      }, meta))
    }
    if ((Number(request.body?.["flags"] ?? 0) & IS_VOICE_MESSAGE) !== 0) {
      const content = request.body?.["content"]
      if ((typeof content === "string" && content.length > 0) || (Array.isArray(request.body?.["embeds"]) && request.body["embeds"].length > 0)) {
        return discordError(400, 50159, "Voice messages do not support additional content.")
      }
      const [voice, ...others] = attachments
      if (voice === undefined || others.length > 0 || !String(voice["content_type"]).startsWith("audio/ogg")) {
        return discordError(400, 50160, "Voice messages must have a single audio attachment.")
      }
      if (typeof voice["duration_secs"] !== "number" || typeof voice["waveform"] !== "string") {
        return discordError(400, 50161, "Voice messages must have supporting metadata.")
      }
    }
    return { attachments }
  }

  private async listen(): Promise<void> {
    this.server = createServer((request, response) => {
      void this.handleHttp(request, response)
    })
    this.wss = new WebSocketServer({ server: this.server })
    this.wss.on("connection", (socket) => this.handleSocket(socket))
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", () => resolve()))
    this.port = (this.server.address() as AddressInfo).port
  }

  // ---------------------------------------------------------------- gateway

  private handleSocket(socket: WebSocket): void {
    if (this.gatewayOutage) {
      socket.terminate()
      return
    }
    this.sockets.add(socket)
    socket.on("close", () => this.sockets.delete(socket))
    socket.send(JSON.stringify({ op: 10, s: null, t: null, d: { heartbeat_interval: this.options.heartbeatIntervalMs ?? 41_250 } }))
    socket.on("message", (raw) => {
      const frame = JSON.parse(raw.toString()) as { op: number; d: unknown }
      if (frame.op === 1) {
        socket.send(JSON.stringify({ op: 11, s: null, t: null, d: null }))
      } else if (frame.op === 2) {
        this.identify(socket, frame.d as JsonObject)
      } else if (frame.op === 6) {
        this.resume(socket, frame.d as JsonObject)
      }
      this.changed()
    })
  }

  private identify(socket: WebSocket, data: JsonObject): void {
    this.identifies.push(data)
    const refusal = this.refuseIdentify ?? this.options.closeOnIdentify
    if (refusal !== undefined) {
      socket.close(refusal, "scripted close")
      return
    }
    if (data["token"] !== this.token) {
      socket.close(4004, "Authentication failed.")
      return
    }
    const shard = Array.isArray(data["shard"]) ? [Number(data["shard"][0]), Number(data["shard"][1])] as const : [0, 1] as const
    const session: GatewaySession = { id: randomBytes(8).toString("hex"), socket, seq: 0, shard, intents: Number(data["intents"]) }
    this.sessions.set(session.id, session)
    const guilds = this.guilds.filter((guild) => this.ownsGuild(session, guild.id))
    session.seq += 1
    socket.send(JSON.stringify({
      op: 0,
      t: "READY",
      s: session.seq,
      d: {
        v: 10,
        user: userPayload(this.bot),
        guilds: guilds.map((guild) => ({ id: guild.id, unavailable: true })),
        session_id: session.id,
        resume_gateway_url: this.gatewayUrl,
        shard,
        application: { id: this.applicationId, flags: 0 }
      }
    }))
    const byGuild = new Map<string, Array<FakeChannel>>()
    for (const channel of this.channels.values()) {
      if (channel.guildId === undefined || channel.deleted) continue
      byGuild.set(channel.guildId, [...(byGuild.get(channel.guildId) ?? []), channel])
    }
    for (const guild of guilds) {
      session.seq += 1
      const channels = byGuild.get(guild.id) ?? []
      socket.send(JSON.stringify({ op: 0, t: "GUILD_CREATE", s: session.seq, d: guildCreatePayload(guild, this.bot, channels) }))
    }
  }

  private resume(socket: WebSocket, data: JsonObject): void {
    const session = typeof data["session_id"] === "string" ? this.sessions.get(data["session_id"]) : undefined
    if (session === undefined || data["token"] !== this.token) {
      socket.send(JSON.stringify({ op: 9, s: null, t: null, d: false }))
      return
    }
    session.socket = socket
    session.seq += 1
    this.resumes += 1
    socket.send(JSON.stringify({ op: 0, t: "RESUMED", s: session.seq, d: {} }))
  }

  // ---------------------------------------------------------------- REST

  private async handleHttp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${this.port}`)
    if (request.method === "GET" && (url.pathname.startsWith("/attachments/") || url.pathname.startsWith("/media-proxy/attachments/"))) {
      this.cdnRequests.push(url.pathname)
      const file = this.cdn.get(cdnPath(url.pathname))
      response.writeHead(file === undefined ? 404 : 200, { "content-type": file?.contentType ?? "text/plain" })
      response.end(file?.data ?? "not found")
      return
    }
    const { body, files } = await readBody(request)
    const path = decodeURIComponent(url.pathname.startsWith(API_PREFIX) ? url.pathname.slice(API_PREFIX.length) : url.pathname)
    const record: RecordedRequest = {
      method: request.method ?? "GET",
      path,
      query: url.searchParams,
      body,
      files,
      authorization: request.headers.authorization,
      at: Date.now(),
      status: 0,
      doneAt: 0
    }
    this.requests.push(record)
    const { status, body: responseBody, headers, cut, hang } = this.globallyLimited(record) ?? this.route(record)
    if (hang === true) {
      this.changed()
      return
    }
    if (status === 429 && cut !== true) {
      if (headers?.["x-ratelimit-global"] === "true") this.rateLimited.global += 1
      else this.rateLimited.route += 1
    }
    if (cut === true) {
      record.doneAt = Date.now()
      response.socket?.destroy()
      this.changed()
      return
    }
    record.status = status
    record.doneAt = Date.now()
    response.writeHead(status, status === 204 ? { ...headers } : { "content-type": "application/json", ...headers })
    response.end(status === 204 ? undefined : JSON.stringify(responseBody ?? {}))
    this.changed()
  }

  /** Requests of the bot the global limit counts: every API request but interaction responses. */
  countsTowardGlobalLimit(request: Pick<RecordedRequest, "path">): boolean {
    return !/^\/interactions\//.test(request.path) && !request.path.startsWith(`/webhooks/${this.applicationId}/`)
  }

  /**
   * The most requests the global limit counts that arrived within any `windowMs` (sliding, not
   * fixed windows), among those `since` (a Date.now() value).
   */
  peakRequestsPerWindow(windowMs = 1000, since = 0): number {
    const times = this.requests.filter((request) => request.at >= since && this.countsTowardGlobalLimit(request)).map((request) => request.at).sort((a, b) => a - b)
    let peak = 0
    for (let start = 0, end = 0; end < times.length; end++) {
      while ((times[end] ?? 0) - (times[start] ?? 0) >= windowMs) start++
      peak = Math.max(peak, end - start + 1)
    }
    return peak
  }

  /** A 429 for a request beyond the global limit (undefined: within it, and now counted). */
  private globallyLimited(request: RecordedRequest): { status: number; body: unknown; headers: Record<string, string>; cut?: boolean; hang?: boolean } | undefined {
    const limit = this.options.globalLimit
    if (limit === undefined || !this.countsTowardGlobalLimit(request)) return undefined
    const now = request.at
    this.globalWindow = this.globalWindow.filter((at) => at > now - 1000)
    if (this.globalWindow.length < limit.perSecond) {
      this.globalWindow.push(now)
      return undefined
    }
    const retryAfter = Math.max(0.001, ((this.globalWindow[0] ?? now) + 1000 - now) / 1000)
    return {
      status: 429,
      body: { message: "You are being rate limited.", retry_after: retryAfter, global: true },
      // Discord's header is whole seconds; the body has the exact wait.
      headers: { "retry-after": String(Math.ceil(retryAfter)), "x-ratelimit-global": "true", "x-ratelimit-scope": "global" }
    }
  }

  private route(request: RecordedRequest): { status: number; body?: unknown; headers?: Record<string, string>; cut?: boolean; hang?: boolean } {
    const fault = this.matchFault(request)
    if (fault !== undefined) {
      if (fault.hang === true) return { status: 0, hang: true }
      if (fault.applied === true) this.routeNormally(request)
      if (fault.cutConnection === true) return { status: 0, cut: true }
      return this.faultResponse(fault, request)
    }
    return this.routeNormally(request)
  }

  private routeNormally(request: RecordedRequest): { status: number; body?: unknown; headers?: Record<string, string> } {
    const segments = request.path.split("/").filter((segment) => segment.length > 0)
    const [first, second, third, fourth, fifth] = segments
    const method = request.method
    const interactionOrWebhook = first === "interactions" || first === "webhooks"
    if (!interactionOrWebhook && request.authorization !== `Bot ${this.token}`) {
      return discordError(401, 0, "401: Unauthorized")
    }

    if (first === "gateway" && second === "bot" && method === "GET") {
      return {
        status: 200,
        body: {
          url: this.gatewayUrl,
          shards: this.options.shards ?? 1,
          session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 }
        }
      }
    }
    if (first === "users" && second === "@me" && third === undefined && method === "GET") return { status: 200, body: userPayload(this.bot) }
    if (first === "users" && second === "@me" && third === "channels" && method === "POST") {
      const recipientId = String(request.body?.["recipient_id"])
      const user = [...this.users.values()].find((candidate) => candidate.id === recipientId)
      if (user === undefined) return discordError(400, 50007, "Cannot send messages to this user")
      return { status: 200, body: channelPayload(this.dmChannel(user)) }
    }
    if (first === "applications" && second === this.applicationId && method === "PUT") {
      const scope = third === "guilds" && fourth !== undefined ? fourth : "global"
      const commands = (Array.isArray(request.body) ? request.body : []) as Array<JsonObject>
      const withIds = commands.map((command) => ({ ...command, id: snowflake(), application_id: this.applicationId, version: snowflake(), type: command["type"] ?? 1 }))
      this.registeredCommands.set(scope, withIds)
      return { status: 200, body: withIds }
    }
    if (first === "channels" && second !== undefined) return this.channelRoute(request, second, third, fourth, fifth)
    if (first === "guilds" && second !== undefined && third === "members" && method === "GET") return this.memberRoute(request, second, fourth)
    if (first === "webhooks" && second !== undefined && third !== undefined) return this.webhookRoute(request, second, third, fourth, fifth)
    if (first === "interactions" && second !== undefined && third !== undefined && fourth === "callback" && method === "POST") {
      return this.interactionCallback(request, third)
    }
    return discordError(404, 0, `404: Not Found (${method} ${request.path})`)
  }

  /** The rule that answers `request`, counting it down (a rule still skipping lets the request through). */
  private matchFault(request: RecordedRequest): FaultRule | undefined {
    for (const rule of this.faults) {
      if ((rule.method !== undefined && rule.method !== request.method) || !rule.path.test(request.path) || (rule.times ?? 0) <= 0) continue
      if ((rule.skip ?? 0) > 0) {
        rule.skip = (rule.skip ?? 0) - 1
        continue
      }
      rule.times = (rule.times ?? 1) - 1
      return rule
    }
    return undefined
  }

  /** What Discord's answer implies for the world: the message or webhook it calls unknown is gone. */
  private applyFaultToWorld(fault: FaultRule, request: RecordedRequest): void {
    const segments = request.path.split("/").filter((segment) => segment.length > 0)
    if (fault.code === 10008) {
      const messageId = segments[0] === "channels" ? segments[3] : segments[0] === "webhooks" ? segments[4] : undefined
      const message = messageId === undefined ? undefined : this.messagesById.get(messageId)
      if (message !== undefined && !message.deleted) {
        message.deleted = true
        this.dispatch("MESSAGE_DELETE", { id: message.id, channel_id: message.channelId, ...(message.guildId === undefined ? {} : { guild_id: message.guildId }) }, message.guildId)
      }
    }
    if (fault.code === 10015 && segments[0] === "webhooks" && segments[1] !== undefined) this.deleteWebhook(segments[1])
  }

  private faultResponse(fault: FaultRule, request: RecordedRequest): { status: number; body: unknown; headers: Record<string, string> } {
    this.applyFaultToWorld(fault, request)
    if (fault.status === 429) {
      const retryAfter = fault.retryAfter ?? 1
      return {
        status: 429,
        body: { message: "You are being rate limited.", retry_after: retryAfter, global: false },
        headers: {
          "retry-after": String(retryAfter),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": String((Date.now() + retryAfter * 1000) / 1000),
          "x-ratelimit-reset-after": String(retryAfter),
          "x-ratelimit-bucket": bucketHash(request.path),
          "x-ratelimit-scope": "user"
        }
      }
    }
    return { status: fault.status, body: { message: `scripted ${fault.status}`, code: fault.code ?? 0 }, headers: {} }
  }

  /** Applies the message bucket of a channel and returns its headers, or a 429 when exhausted. */
  private takeMessageBucket(channelId: string): { readonly headers: Record<string, string>; readonly limited: boolean } {
    const spec = this.options.messageBucket ?? { limit: 5, windowMs: 5000 }
    const now = Date.now()
    let bucket = this.buckets.get(channelId)
    if (bucket === undefined || now >= bucket.resetAt) {
      bucket = { count: 0, resetAt: now + spec.windowMs }
      this.buckets.set(channelId, bucket)
    }
    // Without a configured bucket the fake never limits; it still sends realistic headers.
    const enforce = this.options.messageBucket !== undefined
    bucket.count += 1
    const remaining = enforce ? Math.max(0, spec.limit - bucket.count) : spec.limit - 1
    const resetAfter = (bucket.resetAt - now) / 1000
    const headers = {
      "x-ratelimit-limit": String(spec.limit),
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": String(bucket.resetAt / 1000),
      "x-ratelimit-reset-after": resetAfter.toFixed(3),
      "x-ratelimit-bucket": `messages-${channelId}`
    }
    if (enforce && bucket.count > spec.limit) {
      return { headers: { ...headers, "retry-after": resetAfter.toFixed(3), "x-ratelimit-scope": "user" }, limited: true }
    }
    return { headers, limited: false }
  }

  private channelRoute(
    request: RecordedRequest,
    channelId: string,
    resource: string | undefined,
    messageId: string | undefined,
    extra: string | undefined
  ): { status: number; body?: unknown; headers?: Record<string, string> } {
    const channel = this.channels.get(channelId)
    if (channel === undefined || channel.deleted) return discordError(404, 10003, "Unknown Channel")
    if (channel.noAccess) return discordError(403, 50001, "Missing Access")
    const method = request.method
    if (resource === undefined && method === "GET") return { status: 200, body: channelPayload(channel) }
    if (resource === "typing" && method === "POST") return { status: 204 }
    if (resource === "webhooks") {
      const parent = channel.kind === "thread" ? undefined : channel
      if (parent === undefined) return discordError(400, 50024, "Cannot execute action on this channel type")
      if (method === "GET") return { status: 200, body: this.webhooks(channel.id).map((webhook) => this.webhookPayload(webhook)) }
      if (method === "POST") {
        if (channel.noWebhooks) return discordError(403, 50013, "Missing Permissions")
        const webhook: FakeWebhook = { id: snowflake(), token: randomBytes(24).toString("hex"), channelId: channel.id, name: String(request.body?.["name"] ?? "webhook"), deleted: false }
        this.webhooksById.set(webhook.id, webhook)
        return { status: 200, body: this.webhookPayload(webhook) }
      }
    }
    if (resource !== "messages") return discordError(404, 0, `404: Not Found (${method} ${request.path})`)

    if (messageId === undefined && method === "GET") {
      const limit = Number(request.query.get("limit") ?? 50)
      const before = request.query.get("before")
      const all = this.messages(channel.id).filter((message) => before === null || BigInt(message.id) < BigInt(before))
      return { status: 200, body: all.slice(-limit).reverse().map((message) => this.payloadOf(message)) }
    }
    if (messageId !== undefined && extra === "reactions") return { status: 204 }

    const bucket = this.takeMessageBucket(channel.id)
    if (bucket.limited) {
      return { status: 429, body: { message: "You are being rate limited.", retry_after: Number(bucket.headers["retry-after"]), global: false }, headers: bucket.headers }
    }
    if (messageId === undefined && method === "POST") {
      const invalid = validateMessageBody(request.body, true, request.files.length > 0)
      if (invalid !== undefined) return invalid
      const uploaded = this.uploadedAttachments(request, channel.id)
      if ("status" in uploaded) return uploaded
      // enforce_nonce: a post with the nonce of a message created already returns that message.
      const nonce = request.body?.["enforce_nonce"] === true && typeof request.body["nonce"] === "string" ? `${channel.id} ${request.body["nonce"]}` : undefined
      const earlier = nonce === undefined ? undefined : this.messagesById.get(this.nonces.get(nonce) ?? "")
      if (earlier !== undefined) return { status: 200, body: this.payloadOf(earlier), headers: bucket.headers }
      const reference = request.body?.["message_reference"] as JsonObject | undefined
      const replyTo = typeof reference?.["message_id"] === "string" ? reference["message_id"] : undefined
      if (replyTo !== undefined && this.messagesById.get(replyTo)?.deleted !== false && reference?.["fail_if_not_exists"] !== false) {
        return discordError(400, 50035, "Invalid Form Body (Unknown message)")
      }
      const message = this.storeMessage({
        channel,
        author: this.bot,
        content: String(request.body?.["content"] ?? ""),
        embeds: (request.body?.["embeds"] as ReadonlyArray<JsonObject> | undefined) ?? [],
        replyTo: replyTo !== undefined && this.messagesById.get(replyTo)?.deleted === false ? replyTo : undefined,
        stickerIds: (request.body?.["sticker_ids"] as ReadonlyArray<string> | undefined) ?? [],
        components: (request.body?.["components"] as ReadonlyArray<JsonObject> | undefined) ?? [],
        attachments: uploaded.attachments,
        flags: Number(request.body?.["flags"] ?? 0)
      })
      if (nonce !== undefined) this.nonces.set(nonce, message.id)
      return { status: 200, body: this.payloadOf(message), headers: bucket.headers }
    }
    const message = messageId === undefined ? undefined : this.messagesById.get(messageId)
    if (message === undefined || message.deleted || message.channelId !== channel.id) return discordError(404, 10008, "Unknown Message")
    if (method === "GET") return { status: 200, body: this.payloadOf(message), headers: bucket.headers }
    if (method === "PATCH") {
      if (message.author.id !== this.bot.id) return discordError(403, 50005, "Cannot edit a message authored by another user")
      const invalid = validateMessageBody(request.body, false)
      if (invalid !== undefined) return invalid
      this.applyEdit(message, request.body)
      return { status: 200, body: this.payloadOf(message), headers: bucket.headers }
    }
    if (method === "DELETE") {
      message.deleted = true
      this.dispatch("MESSAGE_DELETE", { id: message.id, channel_id: message.channelId, ...(message.guildId === undefined ? {} : { guild_id: message.guildId }) }, message.guildId)
      return { status: 204, headers: bucket.headers }
    }
    return discordError(405, 0, "405: Method Not Allowed")
  }

  /** Members are the bot and every user the test created. */
  private memberRoute(request: RecordedRequest, guildId: string, which: string | undefined): { status: number; body?: unknown } {
    const guild = this.guilds.find((candidate) => candidate.id === guildId)
    if (guild === undefined) return discordError(404, 10004, "Unknown Guild")
    const everyone = [this.bot, ...this.users.values()]
    if (which === "search") {
      const query = (request.query.get("query") ?? "").toLowerCase()
      const limit = Number(request.query.get("limit") ?? 1)
      const found = everyone.filter((user) => user.username.toLowerCase().startsWith(query)).slice(0, limit)
      return { status: 200, body: found.map((user) => memberPayload(guild, user, true)) }
    }
    const user = everyone.find((candidate) => candidate.id === which)
    return user === undefined ? discordError(404, 10007, "Unknown Member") : { status: 200, body: memberPayload(guild, user, true) }
  }

  private applyEdit(message: StoredMessage, body: JsonObject | undefined): void {
    if (typeof body?.["content"] === "string") message.content = body["content"]
    if (Array.isArray(body?.["embeds"])) message.embeds = body["embeds"] as ReadonlyArray<JsonObject>
    if (Array.isArray(body?.["components"])) message.components = body["components"] as ReadonlyArray<JsonObject>
    message.editedAt = new Date().toISOString()
    message.history.push(message.content)
    this.dispatch("MESSAGE_UPDATE", this.payloadOf(message), message.guildId)
  }

  private webhookPayload(webhook: FakeWebhook): JsonObject {
    return { id: webhook.id, type: 1, token: webhook.token, channel_id: webhook.channelId, guild_id: this.channels.get(webhook.channelId)?.guildId, name: webhook.name, avatar: null, application_id: this.applicationId }
  }

  private webhookRoute(
    request: RecordedRequest,
    webhookId: string,
    token: string,
    resource: string | undefined,
    messageId: string | undefined
  ): { status: number; body?: unknown; headers?: Record<string, string> } {
    if (webhookId === this.applicationId) return this.interactionWebhookRoute(request, token, resource, messageId)
    const webhook = this.webhooksById.get(webhookId)
    if (webhook === undefined || webhook.deleted || webhook.token !== token) return discordError(404, 10015, "Unknown Webhook")
    const threadId = request.query.get("thread_id")
    const target = this.channels.get(threadId ?? webhook.channelId)
    if (target === undefined || target.deleted) return discordError(404, 10003, "Unknown Channel")
    if (threadId !== null && target.parentId !== webhook.channelId) return discordError(400, 220001, "Webhook can only be used with threads of its channel")
    if (resource === undefined && request.method === "POST") {
      const invalid = validateMessageBody(request.body, true, request.files.length > 0)
      if (invalid !== undefined) return invalid
      const uploaded = this.uploadedAttachments(request, target.id)
      if ("status" in uploaded) return uploaded
      const username = String(request.body?.["username"] ?? webhook.name)
      if (/discord|clyde/i.test(username)) return discordError(400, 50035, "Invalid Form Body (username)")
      const message = this.storeMessage({
        channel: target,
        author: { id: webhook.id, username, bot: true },
        content: String(request.body?.["content"] ?? ""),
        embeds: (request.body?.["embeds"] as ReadonlyArray<JsonObject> | undefined) ?? [],
        webhookId: webhook.id,
        attachments: uploaded.attachments,
        flags: Number(request.body?.["flags"] ?? 0)
      })
      return request.query.get("wait") === "true" ? { status: 200, body: this.payloadOf(message) } : { status: 204 }
    }
    if (resource === "messages" && messageId !== undefined) {
      const message = this.messagesById.get(messageId)
      if (message === undefined || message.deleted || message.webhookId !== webhook.id) return discordError(404, 10008, "Unknown Message")
      if (request.method === "PATCH") {
        const invalid = validateMessageBody(request.body, false)
        if (invalid !== undefined) return invalid
        this.applyEdit(message, request.body)
        return { status: 200, body: this.payloadOf(message) }
      }
      if (request.method === "DELETE") {
        message.deleted = true
        return { status: 204 }
      }
      if (request.method === "GET") return { status: 200, body: this.payloadOf(message) }
    }
    return discordError(404, 0, `404: Not Found (${request.method} ${request.path})`)
  }

  private interactionCallback(request: RecordedRequest, token: string): { status: number; body?: unknown } {
    const interaction = this.interactionsByToken.get(token)
    if (interaction === undefined) return discordError(404, 10062, "Unknown interaction")
    if (interaction.callbacks.length > 0) return discordError(400, 40060, "Interaction has already been acknowledged.")
    const body = request.body ?? {}
    interaction.callbacks.push(body)
    const data = body["data"] as JsonObject | undefined
    if (body["type"] === 4) {
      interaction.original = this.interactionMessage(interaction, data)
    }
    // A component interaction's update edits the message the component is on.
    if (body["type"] === 7 && interaction.messageId !== undefined) {
      const message = this.messagesById.get(interaction.messageId)
      if (message !== undefined && !message.deleted) this.applyEdit(message, data)
    }
    if (request.query.get("with_response") !== "true") return { status: 204 }
    return {
      status: 200,
      body: {
        interaction: { id: interaction.id, type: 2, response_message_id: interaction.original?.id, response_message_loading: body["type"] === 5, response_message_ephemeral: ((Number(data?.["flags"] ?? 0)) & 64) !== 0 },
        resource: { type: body["type"], ...(interaction.original === undefined ? {} : { message: this.payloadOf(interaction.original) }) }
      }
    }
  }

  private interactionMessage(interaction: FakeInteraction, data: JsonObject | undefined): StoredMessage {
    const message: StoredMessage = {
      id: snowflake(),
      channelId: interaction.channelId,
      guildId: this.channels.get(interaction.channelId)?.guildId,
      author: this.bot,
      content: String(data?.["content"] ?? ""),
      embeds: (data?.["embeds"] as ReadonlyArray<JsonObject> | undefined) ?? [],
      attachments: [],
      mentions: [],
      replyTo: undefined,
      webhookId: this.applicationId,
      stickerIds: [],
      createdAt: new Date().toISOString(),
      editedAt: undefined,
      history: [String(data?.["content"] ?? "")],
      deleted: false
    }
    // Interaction responses are not part of the channel history.
    return message
  }

  private interactionWebhookRoute(
    request: RecordedRequest,
    token: string,
    resource: string | undefined,
    messageId: string | undefined
  ): { status: number; body?: unknown } {
    const interaction = this.interactionsByToken.get(token)
    if (interaction === undefined) return discordError(404, 10015, "Unknown Webhook")
    if (interaction.callbacks.length === 0) return discordError(404, 10015, "Unknown Webhook (interaction not acknowledged)")
    if (resource === undefined && request.method === "POST") {
      const message = this.interactionMessage(interaction, request.body)
      interaction.followUps.push(message)
      return { status: 200, body: this.payloadOf(message) }
    }
    if (resource === "messages" && messageId === "@original") {
      if (request.method === "PATCH") {
        if (interaction.original === undefined) {
          interaction.original = this.interactionMessage(interaction, request.body)
        } else {
          this.applyEdit(interaction.original, request.body)
        }
        return { status: 200, body: this.payloadOf(interaction.original) }
      }
      if (request.method === "GET" && interaction.original !== undefined) return { status: 200, body: this.payloadOf(interaction.original) }
    }
    return discordError(404, 10008, "Unknown Message")
  }
}

/** The CDN key of an attachment URL: the media proxy serves the same files under `/media-proxy`. */
const cdnPath = (pathname: string): string => pathname.replace(/^\/media-proxy/, "")

const bucketHash = (path: string) => `bucket-${path.replace(/\d{5,}/g, ":id")}`

/** Discord's checks on a message body: content ≤ 2000, ≤ 10 embeds, descriptions ≤ 4096, not empty on create. */
const validateMessageBody = (body: JsonObject | undefined, creating: boolean, hasFiles = false): { status: number; body: unknown } | undefined => {
  const content = body?.["content"]
  if (typeof content === "string" && content.length > 2000) {
    return { status: 400, body: { code: 50035, message: "Invalid Form Body", errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } } } }
  }
  const embeds = body?.["embeds"]
  if (Array.isArray(embeds)) {
    const tooLong = embeds.some((embed: unknown) => typeof embed === "object" && embed !== null && String((embed as JsonObject)["description"] ?? "").length > 4096)
    if (embeds.length > 10 || tooLong) return { status: 400, body: { code: 50035, message: "Invalid Form Body (embeds)" } }
  }
  // Discord trims message text: whitespace alone is an empty message.
  const empty = (typeof content !== "string" || content.trim().length === 0) && (!Array.isArray(embeds) || embeds.length === 0) &&
    !Array.isArray(body?.["sticker_ids"]) && !hasFiles
  if (creating && empty) return { status: 400, body: { code: 50006, message: "Cannot send an empty message" } }
  return undefined
}

/** Reads a JSON body, or a multipart body: its `payload_json` part and its file parts. */
const readBody = async (request: IncomingMessage): Promise<{ readonly body: JsonObject | undefined; readonly files: ReadonlyArray<UploadedFile> }> => {
  const parts: Array<Buffer> = []
  for await (const part of request) parts.push(part as Buffer)
  const raw = Buffer.concat(parts)
  if (raw.length === 0) return { body: undefined, files: [] }
  const type = request.headers["content-type"] ?? ""
  if (type.startsWith("multipart/form-data")) {
    const form = parseMultipart(type, raw)
    const payload = form.find((part) => part.name === "payload_json")
    return {
      body: payload === undefined ? undefined : (JSON.parse(payload.data.toString("utf8")) as JsonObject),
      files: form.filter((part) => part.name !== "payload_json").map((part) => ({ field: part.name, filename: part.filename, contentType: part.contentType, data: part.data }))
    }
  }
  return { body: JSON.parse(raw.toString("utf8")) as JsonObject, files: [] }
}
