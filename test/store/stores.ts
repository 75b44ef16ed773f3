import { Layer } from "effect"
import { SecretBox } from "../../src/store/SecretBox"
import * as Stores from "../../src/store/Stores"
import { migratedLayer, type TestDatabase } from "./databases"

/** The LOOPCORD_SECRET_KEY of the store tests (32 bytes; never a real key). */
export const testSecretKey = new Uint8Array(32).fill(7)

/** Every store over a fresh, migrated copy of the test database (and its SqlClient), sealing secrets under the test key. */
export const storesOn = (database: TestDatabase, secrets: Layer.Layer<SecretBox> = SecretBox.make({ current: testSecretKey })) =>
  Stores.layerOnClient.pipe(Layer.provide(secrets), Layer.provideMerge(migratedLayer(database)))
