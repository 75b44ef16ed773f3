import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { StoreConfig } from "../config/StoreConfig"
import type { GuildMcpRegistry } from "../mcp/GuildMcpRegistry"
import type { ToolUsageStats } from "../tools/ToolUsageStats"
import * as Database from "./Database"
import type { DatabaseTarget } from "./DatabaseUrl"
import { EnabledChannelStore } from "./EnabledChannelStore"
import { GuildImageTagsStore } from "./GuildImageTagsStore"
import * as GuildMcpRegistryStore from "./GuildMcpRegistryStore"
import { GuildSettingsStore } from "./GuildSettingsStore"
import { PersonaBlockStore } from "./PersonaBlockStore"
import { ShortTermMemoryStore } from "./ShortTermMemoryStore"
import { StoreTimeout } from "./StoreTimeout"
import { ToolUsageStore } from "./ToolUsageStore"

/** Every service the store module provides. */
export type Stores =
  | ShortTermMemoryStore
  | PersonaBlockStore
  | EnabledChannelStore
  | GuildSettingsStore
  | GuildImageTagsStore
  | GuildMcpRegistry
  | ToolUsageStore
  | ToolUsageStats

/** All stores over one SqlClient (already migrated: see `Database.layer`). */
export const layerWithoutDatabase: Layer.Layer<Stores, never, SqlClient.SqlClient> = Layer.mergeAll(
  ShortTermMemoryStore.layer,
  PersonaBlockStore.layer,
  EnabledChannelStore.layer,
  GuildSettingsStore.layer,
  GuildImageTagsStore.layer,
  GuildMcpRegistryStore.layer(),
  ToolUsageStore.statsLayer.pipe(Layer.provideMerge(ToolUsageStore.layer))
)

/** All stores over the database the target names (opened and migrated once, shared by all). */
export const layer = (target: DatabaseTarget): Layer.Layer<Stores, Database.DatabaseError> =>
  layerWithoutDatabase.pipe(Layer.provide(Database.layer(target)))

/** All stores over `DATABASE_URL`, each call bounded by `STORE_TIMEOUT_MS`: what `main.ts` provides. */
export const layerConfig: Layer.Layer<Stores, Database.DatabaseError, StoreConfig> = Layer.unwrapEffect(
  Effect.map(StoreConfig, (settings) => layerWithoutDatabase.pipe(Layer.provide(Layer.succeed(StoreTimeout, settings.timeout))))
).pipe(Layer.provide(Database.layerConfig))

/** All stores over a fresh in-memory SQLite database (tests of other modules, the terminal demo). */
export const layerMemory: Layer.Layer<Stores, Database.DatabaseError> = layerWithoutDatabase.pipe(
  Layer.provide(Database.layerMemory)
)
