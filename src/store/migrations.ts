import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Versioned schema changes, run in order by the effect/sql Migrator (`<id>_<name>` keys).
 * Append new entries; never edit a released one. The DDL is plain SQL both SQLite and
 * PostgreSQL accept: TEXT ids, BIGINT epoch millis, INTEGER 0/1 flags, JSON kept as TEXT.
 */
const initialSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE short_term_memory (
    scope_key TEXT NOT NULL,
    persona_key TEXT NOT NULL,
    memory TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (scope_key, persona_key)
  )`
  yield* sql`CREATE TABLE persona_user_blocks (
    guild_id TEXT NOT NULL,
    persona_key TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    mode TEXT NOT NULL,
    reason TEXT,
    blocked_by TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, persona_key, user_id)
  )`
  yield* sql`CREATE INDEX persona_user_blocks_by_expiry ON persona_user_blocks (guild_id, persona_key, expires_at)`
  yield* sql`CREATE TABLE enabled_channels (
    guild_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    enabled_by TEXT,
    enabled_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
  )`
  yield* sql`CREATE TABLE guild_capabilities (
    guild_id TEXT NOT NULL,
    capability TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, capability)
  )`
  yield* sql`CREATE TABLE guild_mcp_servers (
    guild_id TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    server_type TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    headers TEXT NOT NULL,
    added_by TEXT NOT NULL,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, name_key)
  )`
  yield* sql`CREATE TABLE tool_usage (
    guild_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    uses BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, tool_name)
  )`
})

/**
 * What several hosts of one bot share besides the stores: API-key rests (a key rate-limited on
 * one host rests on all; keys are stored as SHA-256 fingerprints, never themselves) and who runs
 * which Discord shard (a lease renewed by heartbeats, so overlapping shard lists are noticed).
 */
const keyCooldowns = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE api_key_cooldowns (
    key_fingerprint TEXT NOT NULL PRIMARY KEY,
    resting_until BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE TABLE discord_shard_leases (
    shard_id INTEGER NOT NULL,
    shard_count INTEGER NOT NULL,
    holder TEXT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    PRIMARY KEY (shard_id, shard_count)
  )`
})

/**
 * Short-term memory becomes per channel (docs/architecture.md, Short-term memory). Until now a
 * guild had one memory, keyed `guild:<id>`; it becomes that guild's server-wide memory
 * (`server:<id>`, read when `server_wide_memory` is on), so channels no longer see what was written
 * elsewhere. DM keys (`dm:<id>`) stay as they are.
 */
const channelMemory = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // "guild:" is 6 characters: the id starts at 7 (substr counts from 1 in both dialects).
  yield* sql`UPDATE short_term_memory
    SET scope_key = 'server:' || substr(scope_key, 7)
    WHERE substr(scope_key, 1, 6) = 'guild:'`
})

/**
 * Who pays for a turn (docs/architecture.md, Who pays for a turn): sealed personal and server keys,
 * the user's opt-out of the server route, admissions of server-paid turns (cooldown and daily
 * quotas, shared by every process on the database) and the usage ledger. Plain-text guild MCP
 * headers already stored are sealed by the guild MCP store when it starts with LOOPCORD_SECRET_KEY
 * (a migration has no key).
 */
const credentials = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE credential_keys (
    owner_kind TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    sealed_key TEXT NOT NULL,
    set_by TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (owner_kind, owner_id)
  )`
  yield* sql`CREATE TABLE credential_preferences (
    user_id TEXT NOT NULL,
    server_route_opt_out INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id)
  )`
  yield* sql`CREATE TABLE server_turn_admissions (
    admission_id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    user_id TEXT NOT NULL,
    day BIGINT NOT NULL,
    admitted_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (admission_id)
  )`
  yield* sql`CREATE INDEX server_turn_admissions_by_day ON server_turn_admissions (scope_key, day, user_id)`
  yield* sql`CREATE INDEX server_turn_admissions_by_user ON server_turn_admissions (scope_key, user_id, admitted_at)`
  yield* sql`CREATE TABLE usage_ledger (
    scope_key TEXT NOT NULL,
    day BIGINT NOT NULL,
    user_id TEXT NOT NULL,
    credential_source TEXT NOT NULL,
    turns BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    total_tokens BIGINT NOT NULL,
    PRIMARY KEY (scope_key, day, user_id, credential_source)
  )`
  yield* sql`CREATE INDEX usage_ledger_by_user ON usage_ledger (user_id, day)`
})

/** Per-server default image tags for generate_image (`/image-tags`). */
const guildImageTags = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE guild_image_tags (
    guild_id TEXT NOT NULL PRIMARY KEY,
    positive_tags TEXT NOT NULL,
    negative_tags TEXT NOT NULL,
    set_by TEXT,
    updated_at BIGINT NOT NULL
  )`
})

/**
 * What each server sets for its own bot: model chain (and per-channel overrides), persona,
 * triggers, per-user rate, access lists and tool approval rules. Lists are one row per entry, so
 * two admins adding at once never overwrite each other.
 */
const serverSettings = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE server_settings (
    guild_id TEXT NOT NULL PRIMARY KEY,
    models TEXT,
    persona_name TEXT,
    persona_avatar_url TEXT,
    persona_prompt TEXT,
    respond_to_mentions INTEGER,
    respond_to_replies INTEGER,
    respond_in_channels INTEGER,
    user_messages_per_minute INTEGER,
    updated_by TEXT,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE TABLE server_channel_models (
    guild_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    models TEXT NOT NULL,
    set_by TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, channel_id)
  )`
  yield* sql`CREATE TABLE server_access_entries (
    guild_id TEXT NOT NULL,
    list_name TEXT NOT NULL,
    target_id TEXT NOT NULL,
    added_by TEXT,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, list_name, target_id)
  )`
  yield* sql`CREATE TABLE server_tool_approvals (
    guild_id TEXT NOT NULL,
    rule_kind TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    added_by TEXT,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (guild_id, rule_kind, name_key)
  )`
})

/**
 * Guild MCP URLs keep only their origin readable: the path and query move to `url_rest`,
 * sealed. The move itself needs LOOPCORD_SECRET_KEY, so it is the store's start-up step
 * (GuildMcpRegistryStore.sealPlainSecretsLayer); until then `url_rest` is empty and `url` whole.
 */
const guildMcpUrlSealed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE guild_mcp_servers ADD COLUMN url_rest TEXT NOT NULL DEFAULT ''`
})

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "1_initial_schema": initialSchema,
  "2_channel_memory": channelMemory,
  "3_key_cooldowns": keyCooldowns,
  "4_credentials": credentials,
  "13_guild_image_tags": guildImageTags,
  "14_guild_mcp_url_sealed": guildMcpUrlSealed,
  "15_server_settings": serverSettings
}

/** Name of the table the Migrator keeps applied versions in. */
export const MIGRATIONS_TABLE = "loopcord_migrations"
