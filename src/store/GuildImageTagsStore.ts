import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { invalidInput, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/** A server's own default image tags (`/image-tags`), in place of IMAGE_DEFAULT_*_TAGS. */
interface GuildImageTags {
  readonly positive: string
  readonly negative: string
}

/** Characters per tag list: tags are a few words each, not a second prompt. */
export const MAX_IMAGE_TAGS_CHARS = 500

export interface GuildImageTagsStoreShape {
  /** None: the server never set its tags (the environment's defaults apply). */
  readonly get: (guildId: string) => Effect.Effect<Option.Option<GuildImageTags>, StoreError>
  readonly set: (guildId: string, tags: GuildImageTags, setBy?: string) => Effect.Effect<void, StoreError>
  /** True when the server had tags. */
  readonly clear: (guildId: string) => Effect.Effect<boolean, StoreError>
}

const STORE = "GuildImageTagsStore"

const TagsRow = Schema.Struct({ positive_tags: Schema.String, negative_tags: Schema.String })

const make: Effect.Effect<GuildImageTagsStoreShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const get = Effect.fn("GuildImageTagsStore.get")(
    function*(guildId: string) {
      const rows = yield* sql`SELECT positive_tags, negative_tags FROM guild_image_tags WHERE guild_id = ${guildId}`
      const [row] = yield* Schema.decodeUnknownEffect(Schema.Array(TagsRow))(rows)
      return row === undefined ? Option.none<GuildImageTags>() : Option.some({ positive: row.positive_tags, negative: row.negative_tags })
    },
    Effect.mapError(storeFailure(STORE, "get"))
  )

  const set = (guildId: string, tags: GuildImageTags, setBy?: string): Effect.Effect<void, StoreError> => {
    const positive = tags.positive.trim()
    const negative = tags.negative.trim()
    if (positive.length > MAX_IMAGE_TAGS_CHARS || negative.length > MAX_IMAGE_TAGS_CHARS) {
      return Effect.fail(invalidInput(STORE, "set", `tag lists are at most ${MAX_IMAGE_TAGS_CHARS} characters`))
    }
    return Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO guild_image_tags (guild_id, positive_tags, negative_tags, set_by, updated_at)
        VALUES (${guildId}, ${positive}, ${negative}, ${setBy ?? null}, ${now})
        ON CONFLICT (guild_id) DO UPDATE SET positive_tags = excluded.positive_tags,
          negative_tags = excluded.negative_tags, set_by = excluded.set_by, updated_at = excluded.updated_at`
    }).pipe(Effect.mapError(storeFailure(STORE, "set")), Effect.withSpan("GuildImageTagsStore.set"))
  }

  const clear = Effect.fn("GuildImageTagsStore.clear")(
    function*(guildId: string) {
      const removed = yield* sql`DELETE FROM guild_image_tags WHERE guild_id = ${guildId} RETURNING guild_id`
      return removed.length > 0
    },
    Effect.mapError(storeFailure(STORE, "clear"))
  )

  return { get, set, clear }
})

export class GuildImageTagsStore extends Context.Service<GuildImageTagsStore, GuildImageTagsStoreShape>()("loopcord/store/GuildImageTagsStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
