import { Layer } from "effect"
import * as Stores from "../../src/store/Stores"
import { migratedLayer, type TestDatabase } from "./databases"

/** Every store over a fresh, migrated copy of the test database. */
export const storesOn = (database: TestDatabase) => Stores.layerWithoutDatabase.pipe(Layer.provide(migratedLayer(database)))
