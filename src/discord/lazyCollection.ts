import { Collection } from "discord.js"

/**
 * A discord.js cache that makes its Collection on the first write. Every manager of every guild
 * and channel owns a cache (a channel alone has three: messages, threads, permission
 * overwrites), and most of them stay empty for the life of the process; V8 allocates a Map's
 * hash table when the Map is made, about 200 bytes, so 2,500 guilds of 25 channels hold tens of
 * MiB of empty tables. This one holds a reference until something is stored.
 *
 * It is a Collection to whoever reads it (`instanceof`, every method, `size`, iteration): every
 * method of Map and Collection is forwarded to the real Collection once there is one, and to a
 * shared empty one before. A method that returns the collection itself returns this one.
 */
/** One field (the real Collection, or how to make it): a few bytes fewer per cache than two. */
interface LazyState<K, V> {
  inner: Collection<K, V> | (() => Collection<K, V>)
}

const realOf = <K, V>(state: LazyState<K, V>): Collection<K, V> | undefined => (typeof state.inner === "function" ? undefined : state.inner)

/** Methods that store, or hand the collection itself to a callback: they need the real one. */
const WRITES = new Set<PropertyKey>(["set", "ensure", "tap", "getOrInsert", "getOrInsertComputed"])

/** What an empty cache reads from. Nothing is ever kept in it (see `forward`). */
const EMPTY = new Collection<unknown, unknown>()

const materialize = <K, V>(state: LazyState<K, V>): Collection<K, V> => {
  if (typeof state.inner === "function") state.inner = state.inner()
  return state.inner
}

const forward = (name: PropertyKey) =>
  function(this: LazyState<unknown, unknown>, ...args: Array<unknown>): unknown {
    const target = realOf(this) ?? (WRITES.has(name) ? materialize(this) : EMPTY)
    const result: unknown = Reflect.apply(Reflect.get(target, name) as Function, target, args)
    if (target === EMPTY && EMPTY.size > 0) {
      // A method not known to store did store (a newer Collection): the entries become this
      // cache's own, and the shared empty one stays empty.
      const own = materialize(this)
      for (const [key, value] of EMPTY) own.set(key, value)
      EMPTY.clear()
    }
    return result === target ? this : result
  }

/** A plain constructor (no Map underneath): its objects get exactly one field. */
function LazyCollection<K, V>(this: LazyState<K, V>, create: () => Collection<K, V>): void {
  this.inner = create
}
const lazyPrototype: object = Object.create(Collection.prototype)
LazyCollection.prototype = lazyPrototype
for (const source of [Map.prototype, Collection.prototype]) {
  for (const name of Reflect.ownKeys(source)) {
    if (name === "constructor") continue
    const descriptor = Reflect.getOwnPropertyDescriptor(source, name)
    if (typeof descriptor?.value === "function") {
      Reflect.defineProperty(lazyPrototype, name, { value: forward(name), writable: true, configurable: true })
    }
  }
}
Reflect.defineProperty(lazyPrototype, "size", {
  get(this: LazyState<unknown, unknown>) {
    return realOf(this)?.size ?? 0
  },
  configurable: true
})

/** A Collection that `create` makes on the first write; until then it reads as empty. */
export const lazyCollection = <K, V>(create: () => Collection<K, V>): Collection<K, V> => {
  const Lazy = LazyCollection as unknown as new(create: () => Collection<K, V>) => LazyState<K, V>
  return new Lazy(create) as unknown as Collection<K, V>
}

/** Whether `collection`'s real Collection was made (tests, and the memory it costs). */
export const isMaterialized = (collection: Collection<unknown, unknown>): boolean =>
  !(collection instanceof LazyCollection) || realOf(collection as unknown as LazyState<unknown, unknown>) !== undefined
