import type { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { CredentialConfig } from "../config/CredentialConfig"
import { StoreConfig } from "../config/StoreConfig"
import type { GuildMcpRegistry } from "../mcp/GuildMcpRegistry"
import type { ToolUsageStats } from "../tools/ToolUsageStats"
import { CredentialStore } from "./CredentialStore"
import * as Database from "./Database"
import type { DatabaseTarget } from "../config/DatabaseUrl"
import { EnabledChannelStore } from "./EnabledChannelStore"
import { GuildImageTagsStore } from "./GuildImageTagsStore"
import * as GuildMcpRegistryStore from "./GuildMcpRegistryStore"
import { GuildSettingsStore } from "./GuildSettingsStore"
import { PersonaBlockStore } from "./PersonaBlockStore"
import { SecretBox } from "./SecretBox"
import { ServerSettingsStore } from "./ServerSettingsStore"
import { ServerTurnAdmissionStore } from "./ServerTurnAdmissionStore"
import { ShortTermMemoryStore } from "./ShortTermMemoryStore"
import { StoreTimeout } from "./StoreTimeout"
import { ToolUsageStore } from "./ToolUsageStore"
import { UsageLedgerStore } from "./UsageLedgerStore"

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
  | CredentialStore
  | ServerTurnAdmissionStore
  | UsageLedgerStore
  | ServerSettingsStore

/** All stores over one SqlClient (already migrated: see `Database.layer`), sealing secrets with the SecretBox. */
export const layerOnClient: Layer.Layer<Stores, never, SqlClient.SqlClient | SecretBox> = Layer.mergeAll(
  ShortTermMemoryStore.layer,
  PersonaBlockStore.layer,
  EnabledChannelStore.layer,
  GuildSettingsStore.layer,
  GuildImageTagsStore.layer,
  GuildMcpRegistryStore.layer(),
  ToolUsageStore.statsLayer.pipe(Layer.provideMerge(ToolUsageStore.layer)),
  CredentialStore.layer,
  ServerTurnAdmissionStore.layer,
  UsageLedgerStore.layer,
  ServerSettingsStore.layer
)

/**
 * All stores over one SqlClient (already migrated) with no secret key: secrets (API keys, MCP
 * headers) are refused, never stored in plain text. Tests of other modules use it.
 */
export const layerWithoutDatabase: Layer.Layer<Stores, never, SqlClient.SqlClient> = layerOnClient.pipe(Layer.provide(SecretBox.unkeyed))

/**
 * All stores over the database the target names (opened and migrated once, shared by all). The
 * default SecretBox has no key: secrets are refused, never stored in plain text.
 */
export const layer = (
  target: DatabaseTarget,
  secrets: Layer.Layer<SecretBox> = SecretBox.unkeyed
): Layer.Layer<Stores, Database.DatabaseError> =>
  layerOnClient.pipe(Layer.provide(Layer.merge(Database.layer(target), secrets)))

/**
 * All stores over `DATABASE_URL`, each call bounded by `STORE_TIMEOUT_MS`, secrets sealed under
 * `LOOPCORD_SECRET_KEY` (plain-text guild MCP headers already stored are sealed at start-up): what
 * `main.ts` provides.
 */
export const layerConfig: Layer.Layer<Stores, Database.DatabaseError, StoreConfig | CredentialConfig> = Layer.unwrap(
  Effect.map(StoreConfig, (settings) =>
    Layer.merge(layerOnClient, GuildMcpRegistryStore.sealPlainSecretsLayer).pipe(
      Layer.provide(Layer.succeed(StoreTimeout, settings.timeout))
    ))
).pipe(Layer.provide(Layer.merge(Database.layerConfig, SecretBox.layerConfig)))

/**
 * All stores over a fresh in-memory SQLite database (tests of other modules, the terminal demo);
 * secrets are sealed under a random key that dies with the database.
 */
export const layerMemory: Layer.Layer<Stores, Database.DatabaseError> = layerOnClient.pipe(
  Layer.provide(Layer.merge(Database.layerMemory, SecretBox.ephemeral))
)
