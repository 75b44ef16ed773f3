import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Versioned schema changes, run in order by the @effect/sql Migrator (`<id>_<name>` keys).
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

/** Per-server default image tags for generate_image (`/image-tags`, issue 13). */
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

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "1_initial_schema": initialSchema,
  "13_guild_image_tags": guildImageTags
}

/** Name of the table the Migrator keeps applied versions in. */
export const MIGRATIONS_TABLE = "loopcord_migrations"
