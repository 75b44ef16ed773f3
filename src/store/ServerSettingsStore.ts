import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { DbFlag, DbOptionalText, flagValue, invalidInput, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * What a server sets for its own bot (`/model`, `/persona`, `/triggers`, `/access`, `/approvals`):
 * its model chain (and per-channel overrides), persona, which messages trigger a reply, who may
 * trigger one and how often, and which tools wait for a human. Every list and text is bounded
 * here as well as in the commands, so nothing a server sends can grow without limit.
 */

/** Bounds of what one server stores. */
export const ServerLimits = {
  personaName: 80,
  personaPrompt: 4000,
  avatarUrl: 2048,
  /** Entries per access list (allowed roles, denied roles, denied users). */
  accessEntries: 50,
  approvalRules: 100,
  channelOverrides: 500,
  modelsJson: 2000,
  /** Messages per minute a per-user rate may be set to. */
  messagesPerMinute: 120,
  toolName: 64
} as const

export interface ServerPersona {
  readonly name: string | undefined
  readonly avatarUrl: string | undefined
  readonly systemPrompt: string | undefined
}

/** Which messages the bot answers in the server besides DMs (each on by default). */
export interface ServerTriggers {
  readonly mentions: boolean
  readonly replies: boolean
  /** Channels enabled with `/channel enable`. */
  readonly channels: boolean
}

export const ACCESS_LISTS = ["allowed_roles", "denied_roles", "denied_users"] as const
export type AccessList = (typeof ACCESS_LISTS)[number]

export interface ServerAccess {
  /** Empty: every member may trigger the bot; else only members with one of these roles. */
  readonly allowedRoles: ReadonlyArray<string>
  readonly deniedRoles: ReadonlyArray<string>
  readonly deniedUsers: ReadonlyArray<string>
  /** Messages per minute one user may trigger (0: no limit). */
  readonly userMessagesPerMinute: number
}

export interface ServerSettings {
  /** The server's model chain; undefined: the operator's `LLM_MODELS`. */
  readonly models: ReadonlyArray<string> | undefined
  readonly persona: ServerPersona
  readonly triggers: ServerTriggers
  readonly access: ServerAccess
}

const APPROVAL_RULE_KINDS = ["tool", "mcp_server"] as const
type ApprovalRuleKind = (typeof APPROVAL_RULE_KINDS)[number]

/** A tool (by name) or every tool of one MCP server that waits for Approve / Deny. */
export interface ApprovalRule {
  readonly kind: ApprovalRuleKind
  readonly name: string
}

export const defaultServerSettings: ServerSettings = {
  models: undefined,
  persona: { name: undefined, avatarUrl: undefined, systemPrompt: undefined },
  triggers: { mentions: true, replies: true, channels: true },
  access: { allowedRoles: [], deniedRoles: [], deniedUsers: [], userMessagesPerMinute: 0 }
}

/** What adding to a bounded list did. */
type AddOutcome = "added" | "already_there" | "full"

interface ServerSettingsStoreShape {
  readonly get: (guildId: string) => Effect.Effect<ServerSettings, StoreError>
  /** The chain set for the first of `channelIds` that has one (a thread, then its channel). */
  readonly channelModels: (guildId: string, channelIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string> | undefined, StoreError>
  /** undefined clears it (the operator's chain again). */
  readonly setModels: (guildId: string, models: ReadonlyArray<string> | undefined, by: string) => Effect.Effect<void, StoreError>
  /** Full: the server has ServerLimits.channelOverrides already (a new channel is refused). */
  readonly setChannelModels: (
    guildId: string,
    channelId: string,
    models: ReadonlyArray<string> | undefined,
    by: string
  ) => Effect.Effect<"set" | "cleared" | "full", StoreError>
  /** Clears every channel override of the server; how many there were. */
  readonly clearChannelModels: (guildId: string) => Effect.Effect<number, StoreError>
  readonly setPersona: (guildId: string, persona: ServerPersona, by: string) => Effect.Effect<void, StoreError>
  readonly setTriggers: (guildId: string, triggers: ServerTriggers, by: string) => Effect.Effect<void, StoreError>
  readonly setUserRate: (guildId: string, messagesPerMinute: number, by: string) => Effect.Effect<void, StoreError>
  readonly addAccess: (guildId: string, list: AccessList, targetId: string, by: string) => Effect.Effect<AddOutcome, StoreError>
  readonly removeAccess: (guildId: string, list: AccessList, targetId: string) => Effect.Effect<boolean, StoreError>
  readonly approvalRules: (guildId: string) => Effect.Effect<ReadonlyArray<ApprovalRule>, StoreError>
  readonly addApprovalRule: (guildId: string, rule: ApprovalRule, by: string) => Effect.Effect<AddOutcome, StoreError>
  readonly removeApprovalRule: (guildId: string, rule: ApprovalRule) => Effect.Effect<boolean, StoreError>
}

const STORE = "ServerSettingsStore"

const ModelsJson = Schema.fromJsonString(Schema.Array(Schema.String))

const SettingsRow = Schema.Struct({
  models: DbOptionalText,
  persona_name: DbOptionalText,
  persona_avatar_url: DbOptionalText,
  persona_prompt: DbOptionalText,
  respond_to_mentions: Schema.NullOr(DbFlag),
  respond_to_replies: Schema.NullOr(DbFlag),
  respond_in_channels: Schema.NullOr(DbFlag),
  user_messages_per_minute: Schema.NullOr(Schema.Number)
})

const AccessRow = Schema.Struct({ list_name: Schema.String, target_id: Schema.String })
const ApprovalRow = Schema.Struct({ rule_kind: Schema.String, name: Schema.String })
const ChannelModelsRow = Schema.Struct({ channel_id: Schema.String, models: Schema.String })

const isAccessList = (name: string): name is AccessList => (ACCESS_LISTS as ReadonlyArray<string>).includes(name)
const isRuleKind = (name: string): name is ApprovalRuleKind => (APPROVAL_RULE_KINDS as ReadonlyArray<string>).includes(name)

/** Discord ids are decimal snowflakes; anything else never reaches a query. */
const isSnowflake = (id: string) => /^\d{1,25}$/.test(id)

/** Approval rules match names case-insensitively (MCP server names are case-insensitive too). */
const ruleKey = (name: string) => name.trim().toLowerCase()

const make: Effect.Effect<ServerSettingsStoreShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const decodeModels = (json: string | undefined) =>
    json === undefined ? Effect.succeed(undefined) : Schema.decodeUnknownEffect(ModelsJson)(json)

  const encodeModels = (operation: string, models: ReadonlyArray<string> | undefined) => {
    if (models === undefined) return Effect.succeed(null)
    const json = JSON.stringify(models)
    return models.length === 0 || json.length > ServerLimits.modelsJson
      ? Effect.fail(invalidInput(STORE, operation, "a model chain must name 1 to a few models"))
      : Effect.succeed(json)
  }

  const get = Effect.fn("ServerSettingsStore.get")(
    function*(guildId: string) {
      const rows = yield* sql`SELECT models, persona_name, persona_avatar_url, persona_prompt, respond_to_mentions,
        respond_to_replies, respond_in_channels, user_messages_per_minute FROM server_settings WHERE guild_id = ${guildId}`
      const [row] = yield* Schema.decodeUnknownEffect(Schema.Array(SettingsRow))(rows)
      const entries = yield* Schema.decodeUnknownEffect(Schema.Array(AccessRow))(
        yield* sql`SELECT list_name, target_id FROM server_access_entries WHERE guild_id = ${guildId} ORDER BY added_at, target_id`
      )
      const listed = (list: AccessList) => entries.filter((entry) => entry.list_name === list).map((entry) => entry.target_id).slice(0, ServerLimits.accessEntries)
      const defaults = defaultServerSettings
      return {
        models: yield* decodeModels(row?.models),
        persona: { name: row?.persona_name, avatarUrl: row?.persona_avatar_url, systemPrompt: row?.persona_prompt },
        triggers: {
          mentions: row?.respond_to_mentions ?? defaults.triggers.mentions,
          replies: row?.respond_to_replies ?? defaults.triggers.replies,
          channels: row?.respond_in_channels ?? defaults.triggers.channels
        },
        access: {
          allowedRoles: listed("allowed_roles"),
          deniedRoles: listed("denied_roles"),
          deniedUsers: listed("denied_users"),
          userMessagesPerMinute: Math.min(Math.max(0, row?.user_messages_per_minute ?? 0), ServerLimits.messagesPerMinute)
        }
      } satisfies ServerSettings
    },
    Effect.mapError(storeFailure(STORE, "get"))
  )

  const channelModels = Effect.fn("ServerSettingsStore.channelModels")(
    function*(guildId: string, channelIds: ReadonlyArray<string>) {
      const ids = channelIds.filter(isSnowflake).slice(0, 2)
      if (ids.length === 0) return undefined
      const rows = yield* Schema.decodeUnknownEffect(Schema.Array(ChannelModelsRow))(
        yield* sql`SELECT channel_id, models FROM server_channel_models WHERE guild_id = ${guildId} AND ${sql.in("channel_id", ids)}`
      )
      for (const id of ids) {
        const row = rows.find((candidate) => candidate.channel_id === id)
        if (row !== undefined) return yield* decodeModels(row.models)
      }
      return undefined
    },
    Effect.mapError(storeFailure(STORE, "channelModels"))
  )

  /** Creates the server's row when it has none, so each setter updates only its own columns. */
  const ensureRow = (guildId: string, by: string, now: number) =>
    sql`INSERT INTO server_settings (guild_id, updated_by, updated_at) VALUES (${guildId}, ${by}, ${now})
      ON CONFLICT (guild_id) DO NOTHING`

  const setModels = (guildId: string, models: ReadonlyArray<string> | undefined, by: string) =>
    Effect.gen(function*() {
      const json = yield* encodeModels("setModels", models)
      const now = yield* Clock.currentTimeMillis
      yield* Effect.mapError(
        Effect.andThen(
          ensureRow(guildId, by, now),
          sql`UPDATE server_settings SET models = ${json}, updated_by = ${by}, updated_at = ${now} WHERE guild_id = ${guildId}`
        ),
        storeFailure(STORE, "setModels")
      )
    }).pipe(Effect.withSpan("ServerSettingsStore.setModels"))

  const setChannelModels = (guildId: string, channelId: string, models: ReadonlyArray<string> | undefined, by: string) =>
    Effect.gen(function*() {
      if (!isSnowflake(channelId)) return yield* Effect.fail(invalidInput(STORE, "setChannelModels", "not a channel id"))
      const json = yield* encodeModels("setChannelModels", models)
      const now = yield* Clock.currentTimeMillis
      return yield* Effect.gen(function*() {
        if (json === null) {
          yield* sql`DELETE FROM server_channel_models WHERE guild_id = ${guildId} AND channel_id = ${channelId}`
          return "cleared" as const
        }
        const updated = yield* sql`UPDATE server_channel_models SET models = ${json}, set_by = ${by}, updated_at = ${now}
          WHERE guild_id = ${guildId} AND channel_id = ${channelId} RETURNING channel_id`
        if (updated.length > 0) return "set" as const
        // A new channel: only while the server is under its bound (checked in the same statement).
        const inserted = yield* sql`INSERT INTO server_channel_models (guild_id, channel_id, models, set_by, updated_at)
          SELECT ${guildId}, ${channelId}, ${json}, ${by}, ${now}
          WHERE (SELECT COUNT(*) FROM server_channel_models WHERE guild_id = ${guildId}) < ${ServerLimits.channelOverrides}
          ON CONFLICT (guild_id, channel_id) DO UPDATE SET models = excluded.models, set_by = excluded.set_by, updated_at = excluded.updated_at
          RETURNING channel_id`
        return inserted.length > 0 ? "set" as const : "full" as const
      }).pipe(Effect.mapError(storeFailure(STORE, "setChannelModels")))
    }).pipe(Effect.withSpan("ServerSettingsStore.setChannelModels"))

  const clearChannelModels = Effect.fn("ServerSettingsStore.clearChannelModels")(
    function*(guildId: string) {
      const removed = yield* sql`DELETE FROM server_channel_models WHERE guild_id = ${guildId} RETURNING channel_id`
      return removed.length
    },
    Effect.mapError(storeFailure(STORE, "clearChannelModels"))
  )

  const setPersona = (guildId: string, persona: ServerPersona, by: string) =>
    Effect.gen(function*() {
      if ((persona.name?.length ?? 0) > ServerLimits.personaName || (persona.systemPrompt?.length ?? 0) > ServerLimits.personaPrompt ||
        (persona.avatarUrl?.length ?? 0) > ServerLimits.avatarUrl) {
        return yield* Effect.fail(invalidInput(STORE, "setPersona", "a persona field is longer than its limit"))
      }
      const now = yield* Clock.currentTimeMillis
      yield* Effect.mapError(
        Effect.andThen(
          ensureRow(guildId, by, now),
          sql`UPDATE server_settings SET persona_name = ${persona.name ?? null}, persona_avatar_url = ${persona.avatarUrl ?? null},
            persona_prompt = ${persona.systemPrompt ?? null}, updated_by = ${by}, updated_at = ${now} WHERE guild_id = ${guildId}`
        ),
        storeFailure(STORE, "setPersona")
      )
    }).pipe(Effect.withSpan("ServerSettingsStore.setPersona"))

  const setTriggers = Effect.fn("ServerSettingsStore.setTriggers")(
    function*(guildId: string, triggers: ServerTriggers, by: string) {
      const now = yield* Clock.currentTimeMillis
      yield* ensureRow(guildId, by, now)
      yield* sql`UPDATE server_settings SET respond_to_mentions = ${flagValue(triggers.mentions)},
        respond_to_replies = ${flagValue(triggers.replies)}, respond_in_channels = ${flagValue(triggers.channels)},
        updated_by = ${by}, updated_at = ${now} WHERE guild_id = ${guildId}`
    },
    Effect.mapError(storeFailure(STORE, "setTriggers"))
  )

  const setUserRate = (guildId: string, messagesPerMinute: number, by: string) =>
    Effect.gen(function*() {
      if (!Number.isInteger(messagesPerMinute) || messagesPerMinute < 0 || messagesPerMinute > ServerLimits.messagesPerMinute) {
        return yield* Effect.fail(invalidInput(STORE, "setUserRate", `the rate must be 0 to ${ServerLimits.messagesPerMinute} messages per minute`))
      }
      const now = yield* Clock.currentTimeMillis
      yield* Effect.mapError(
        Effect.andThen(
          ensureRow(guildId, by, now),
          sql`UPDATE server_settings SET user_messages_per_minute = ${messagesPerMinute}, updated_by = ${by}, updated_at = ${now}
            WHERE guild_id = ${guildId}`
        ),
        storeFailure(STORE, "setUserRate")
      )
    }).pipe(Effect.withSpan("ServerSettingsStore.setUserRate"))

  const addAccess = (guildId: string, list: AccessList, targetId: string, by: string) =>
    Effect.gen(function*() {
      if (!isAccessList(list) || !isSnowflake(targetId)) return yield* Effect.fail(invalidInput(STORE, "addAccess", "not a role or user id"))
      const now = yield* Clock.currentTimeMillis
      return yield* Effect.gen(function*() {
        const existing = yield* sql`SELECT target_id FROM server_access_entries
          WHERE guild_id = ${guildId} AND list_name = ${list} AND target_id = ${targetId}`
        if (existing.length > 0) return "already_there" as const
        const inserted = yield* sql`INSERT INTO server_access_entries (guild_id, list_name, target_id, added_by, added_at)
          SELECT ${guildId}, ${list}, ${targetId}, ${by}, ${now}
          WHERE (SELECT COUNT(*) FROM server_access_entries WHERE guild_id = ${guildId} AND list_name = ${list}) < ${ServerLimits.accessEntries}
          ON CONFLICT (guild_id, list_name, target_id) DO NOTHING
          RETURNING target_id`
        return inserted.length > 0 ? "added" as const : "full" as const
      }).pipe(Effect.mapError(storeFailure(STORE, "addAccess")))
    }).pipe(Effect.withSpan("ServerSettingsStore.addAccess"))

  const removeAccess = Effect.fn("ServerSettingsStore.removeAccess")(
    function*(guildId: string, list: AccessList, targetId: string) {
      const removed = yield* sql`DELETE FROM server_access_entries
        WHERE guild_id = ${guildId} AND list_name = ${list} AND target_id = ${targetId} RETURNING target_id`
      return removed.length > 0
    },
    Effect.mapError(storeFailure(STORE, "removeAccess"))
  )

  const approvalRules = Effect.fn("ServerSettingsStore.approvalRules")(
    function*(guildId: string) {
      const rows = yield* Schema.decodeUnknownEffect(Schema.Array(ApprovalRow))(
        yield* sql`SELECT rule_kind, name FROM server_tool_approvals WHERE guild_id = ${guildId} ORDER BY rule_kind DESC, name_key`
      )
      return rows.flatMap((row): ReadonlyArray<ApprovalRule> => (isRuleKind(row.rule_kind) ? [{ kind: row.rule_kind, name: row.name }] : []))
        .slice(0, ServerLimits.approvalRules)
    },
    Effect.mapError(storeFailure(STORE, "approvalRules"))
  )

  const addApprovalRule = (guildId: string, rule: ApprovalRule, by: string) =>
    Effect.gen(function*() {
      const name = rule.name.trim()
      if (!isRuleKind(rule.kind) || name.length === 0 || name.length > ServerLimits.toolName) {
        return yield* Effect.fail(invalidInput(STORE, "addApprovalRule", `a tool or server name of 1 to ${ServerLimits.toolName} characters`))
      }
      const now = yield* Clock.currentTimeMillis
      return yield* Effect.gen(function*() {
        const existing = yield* sql`SELECT name FROM server_tool_approvals
          WHERE guild_id = ${guildId} AND rule_kind = ${rule.kind} AND name_key = ${ruleKey(name)}`
        if (existing.length > 0) return "already_there" as const
        const inserted = yield* sql`INSERT INTO server_tool_approvals (guild_id, rule_kind, name_key, name, added_by, added_at)
          SELECT ${guildId}, ${rule.kind}, ${ruleKey(name)}, ${name}, ${by}, ${now}
          WHERE (SELECT COUNT(*) FROM server_tool_approvals WHERE guild_id = ${guildId}) < ${ServerLimits.approvalRules}
          ON CONFLICT (guild_id, rule_kind, name_key) DO NOTHING
          RETURNING name_key`
        return inserted.length > 0 ? "added" as const : "full" as const
      }).pipe(Effect.mapError(storeFailure(STORE, "addApprovalRule")))
    }).pipe(Effect.withSpan("ServerSettingsStore.addApprovalRule"))

  const removeApprovalRule = Effect.fn("ServerSettingsStore.removeApprovalRule")(
    function*(guildId: string, rule: ApprovalRule) {
      const removed = yield* sql`DELETE FROM server_tool_approvals
        WHERE guild_id = ${guildId} AND rule_kind = ${rule.kind} AND name_key = ${ruleKey(rule.name)} RETURNING name_key`
      return removed.length > 0
    },
    Effect.mapError(storeFailure(STORE, "removeApprovalRule"))
  )

  return {
    get,
    channelModels,
    setModels,
    setChannelModels,
    clearChannelModels,
    setPersona,
    setTriggers,
    setUserRate,
    addAccess,
    removeAccess,
    approvalRules,
    addApprovalRule,
    removeApprovalRule
  }
})

export class ServerSettingsStore extends Context.Service<ServerSettingsStore, ServerSettingsStoreShape>()("loopcord/store/ServerSettingsStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
