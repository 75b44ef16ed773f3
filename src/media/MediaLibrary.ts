import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option, Ref } from "effect"
import { OpaqueIds } from "../tools/OpaqueIds"

/**
 * Where a piece of media comes from: a URL (a Discord attachment, an embed image) or bytes
 * loopcord holds itself (a generated image, a terminal attachment).
 */
type MediaSource =
  | { readonly _tag: "Remote"; readonly url: string; readonly mimeType?: string | undefined }
  | {
    readonly _tag: "Stored"
    readonly bytes: Uint8Array
    readonly mimeType: string
    readonly filename: string
    /** Where the terminal saved it, when it did. */
    readonly path?: string | undefined
  }

type MediaKind = "image" | "audio"

interface MediaEntry {
  /** The short opaque id the model sees (`img_…`, `aud_…`). */
  readonly id: string
  readonly kind: MediaKind
  readonly source: MediaSource
}

/** Entries kept at most; the least recently used go first. */
const MEDIA_LIBRARY_MAX_ENTRIES = 1024
/** Bytes of stored media kept at most (the oldest stored entries go first). */
const MEDIA_LIBRARY_MAX_STORED_BYTES = 256 * 1024 * 1024

const STORED_PREFIX = "media:"
const ID_PATTERN = /^(img|aud)_[a-z2-7]{8,32}$/

/** The reference a resolved `media_id` becomes: the URL, or `media:<id>` for bytes held here. */
export const locatorOf = (entry: MediaEntry): string =>
  entry.source._tag === "Remote" ? entry.source.url : `${STORED_PREFIX}${entry.id}`

/** The id inside a `media:<id>` locator. */
export const storedIdOf = (locator: string): string | undefined =>
  locator.startsWith(STORED_PREFIX) ? locator.slice(STORED_PREFIX.length) : undefined

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"

/** `length` base32 characters of a SHA-256: stable for the same source, across turns and restarts. */
const digestId = (kind: MediaKind, material: Uint8Array | string, length: number): string => {
  const digest = createHash("sha256").update(material).digest()
  let bits = 0
  let value = 0
  let out = ""
  for (const byte of digest) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5 && out.length < length) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return `${kind === "image" ? "img" : "aud"}_${out}`
}

const sameSource = (a: MediaSource, b: MediaSource): boolean =>
  a._tag === "Remote" && b._tag === "Remote"
    ? a.url === b.url
    : a._tag === "Stored" && b._tag === "Stored" && Buffer.compare(a.bytes, b.bytes) === 0

const storedBytes = (entries: ReadonlyMap<string, MediaEntry>): number => {
  let total = 0
  for (const entry of entries.values()) if (entry.source._tag === "Stored") total += entry.source.bytes.byteLength
  return total
}

export interface MediaLibraryShape {
  /** The entry of `source` (the same id for the same URL or the same bytes), registering it if new. */
  readonly register: (source: MediaSource, kind?: MediaKind) => Effect.Effect<MediaEntry>
  readonly lookup: (id: string) => Effect.Effect<Option.Option<MediaEntry>>
  /** The entry behind a resolved `media_id` (a URL or `media:<id>`). */
  readonly byLocator: (locator: string) => Effect.Effect<Option.Option<MediaEntry>>
}

/**
 * Opaque media ids (docs/architecture.md, Media): the model sees `img_ab12cd34`, never a URL; tools
 * take the id and the registry resolves it to the source. Ids derive from the source (a hash), so a
 * message's image keeps its id from turn to turn. Bounded: 1024 entries, 256 MiB of held bytes.
 */
/**
 * The entry of an image of the conversation: bytes the library holds (`media:<id>`, a terminal
 * attachment) as they are, anything else registered by its URL.
 */
export const entryOf = (library: MediaLibraryShape, image: { readonly url: string; readonly mimeType?: string | undefined }): Effect.Effect<MediaEntry> => {
  const stored = storedIdOf(image.url)
  const remote = library.register({ _tag: "Remote", url: image.url, mimeType: image.mimeType })
  return stored === undefined ? remote : Effect.flatMap(library.lookup(stored), Option.match({ onNone: () => remote, onSome: Effect.succeed }))
}

const make = Effect.gen(function*() {
  // Map order is recency order: a lookup moves the entry to the end.
  const entries = yield* Ref.make<ReadonlyMap<string, MediaEntry>>(new Map())

  const evict = (map: Map<string, MediaEntry>) => {
    for (const key of map.keys()) {
      if (map.size <= MEDIA_LIBRARY_MAX_ENTRIES) break
      map.delete(key)
    }
    let held = storedBytes(map)
    for (const [key, entry] of map) {
      if (held <= MEDIA_LIBRARY_MAX_STORED_BYTES) break
      if (entry.source._tag !== "Stored") continue
      held -= entry.source.bytes.byteLength
      map.delete(key)
    }
  }

  const register = (source: MediaSource, kind: MediaKind = "image") =>
    Ref.modify(entries, (current): [MediaEntry, ReadonlyMap<string, MediaEntry>] => {
      const material = source._tag === "Remote" ? source.url : source.bytes
      // A hash collision between different sources gets a longer id.
      for (let length = 8; ; length += 4) {
        const id = digestId(kind, material, length)
        const existing = current.get(id)
        if (existing !== undefined && !sameSource(existing.source, source)) continue
        const next = new Map(current)
        next.delete(id)
        const entry: MediaEntry = existing ?? { id, kind, source }
        next.set(id, entry)
        evict(next)
        return [entry, next]
      }
    })

  const lookup = (id: string) =>
    ID_PATTERN.test(id)
      ? Ref.modify(entries, (current): [Option.Option<MediaEntry>, ReadonlyMap<string, MediaEntry>] => {
        const entry = current.get(id)
        if (entry === undefined) return [Option.none(), current]
        const next = new Map(current)
        next.delete(id)
        next.set(id, entry)
        return [Option.some(entry), next]
      })
      : Effect.succeedNone

  const byLocator = (locator: string) => {
    const stored = storedIdOf(locator)
    if (stored !== undefined) return lookup(stored)
    return Effect.map(Ref.get(entries), (current) => {
      for (const entry of current.values()) if (entry.source._tag === "Remote" && entry.source.url === locator) return Option.some(entry)
      return Option.none<MediaEntry>()
    })
  }

  return { register, lookup, byLocator } satisfies MediaLibraryShape
})

export class MediaLibrary extends Context.Service<MediaLibrary, MediaLibraryShape>()("loopcord/media/MediaLibrary") {
  static readonly Default = Layer.effect(MediaLibrary, make)
  /** The library as the registry's resolver of `media_id` arguments. */
  static readonly opaqueIds = Layer.effect(
    OpaqueIds,
    Effect.map(MediaLibrary, (library) => ({
      resolveMediaId: (id: string) => Effect.map(library.lookup(id), Option.map(locatorOf))
    }))
  )
}
