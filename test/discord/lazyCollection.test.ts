import { assert, describe, it } from "@effect/vitest"
import { Collection, LimitedCollection } from "discord.js"
import { isMaterialized, lazyCollection } from "../../src/discord/lazyCollection"

/** Every function of Map and Collection, with arguments it can run on. */
const calls: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]> = [
  ["get", ["a"]],
  ["has", ["a"]],
  ["keys", []],
  ["values", []],
  ["entries", []],
  ["forEach", [() => undefined]],
  ["hasAll", ["a", "b"]],
  ["hasAny", ["a", "z"]],
  ["first", []],
  ["first", [2]],
  ["firstKey", []],
  ["last", []],
  ["lastKey", [2]],
  ["at", [1]],
  ["keyAt", [-1]],
  ["find", [(value: number) => value > 1]],
  ["findKey", [(value: number) => value > 1]],
  ["filter", [(value: number) => value > 1]],
  ["partition", [(value: number) => value > 1]],
  ["map", [(value: number) => value * 2]],
  ["mapValues", [(value: number) => value * 2]],
  ["flatMap", [(value: number, key: string) => new Collection([[key, value]])]],
  ["some", [(value: number) => value > 1]],
  ["every", [(value: number) => value > 0]],
  ["reduce", [(sum: number, value: number) => sum + value, 0]],
  ["clone", []],
  ["concat", [new Collection([["z", 26]])]],
  ["equals", [new Collection([["a", 1]])]],
  ["sorted", [(x: number, y: number) => y - x]],
  ["intersect", [new Collection([["a", 0]])]],
  ["subtract", [new Collection([["a", 0]])]],
  ["difference", [new Collection([["a", 0]])]],
  ["merge", [new Collection([["a", 0]]), (x: number) => ({ keep: true, value: x }), (y: number) => ({ keep: true, value: y }), (x: number) => ({ keep: true, value: x })]],
  ["toJSON", []]
]

/** A result as data: iterators and collections become arrays of entries. */
const plain = (value: unknown): unknown => {
  if (value instanceof Map) return [...value].map(([key, entry]) => [key, plain(entry)])
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null && Symbol.iterator in value) return [...(value as Iterable<unknown>)].map(plain)
  return value
}

const fill = (collection: Collection<string, number>) => collection.set("a", 1).set("b", 2).set("c", 3)

describe("lazyCollection", () => {
  it("reads as an empty Collection and makes nothing until something is stored", () => {
    let made = 0
    const lazy = lazyCollection<string, number>(() => {
      made++
      return new Collection()
    })
    assert.instanceOf(lazy, Collection)
    assert.instanceOf(lazy, Map)
    assert.strictEqual(lazy.size, 0)
    for (const [name, args] of calls) {
      const expected = plain(Reflect.apply(Reflect.get(new Collection(), name) as Function, new Collection(), args))
      assert.deepStrictEqual(plain(Reflect.apply(Reflect.get(lazy, name) as Function, lazy, args)), expected, name)
    }
    assert.deepStrictEqual([...lazy], [])
    assert.isFalse(lazy.delete("a"))
    lazy.clear()
    assert.strictEqual(lazy.sweep(() => true), 0)
    assert.strictEqual(made, 0, "no read made the real collection")
    assert.isFalse(isMaterialized(lazy))
  })

  it("answers every method as the same Collection would, once written", () => {
    const lazy = fill(lazyCollection<string, number>(() => new Collection()))
    assert.isTrue(isMaterialized(lazy))
    for (const [name, args] of calls) {
      const real = fill(new Collection())
      const expected = plain(Reflect.apply(Reflect.get(real, name) as Function, real, args))
      assert.deepStrictEqual(plain(Reflect.apply(Reflect.get(lazy, name) as Function, lazy, args)), expected, name)
    }
    assert.strictEqual(lazy.size, 3)
    assert.deepStrictEqual([...lazy.sort((x, y) => y - x).keys()], ["c", "b", "a"])
    assert.deepStrictEqual([...lazy.reverse().keys()], ["a", "b", "c"])
    assert.strictEqual(lazy.sweep((value) => value === 2), 1)
    assert.strictEqual(lazy.ensure("d", () => 4), 4)
    assert.isTrue(lazy.delete("a"))
    assert.deepStrictEqual([...lazy], [["c", 3], ["d", 4]])
  })

  it("has a function for everything Map and Collection define (none is left to Map's own, which would throw)", () => {
    const lazy = fill(lazyCollection<string, number>(() => new Collection()))
    for (const source of [Map.prototype, Collection.prototype]) {
      for (const name of Reflect.ownKeys(source)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(source, name)
        if (name === "constructor" || typeof descriptor?.value !== "function") continue
        assert.notStrictEqual(Reflect.get(lazy, name), descriptor.value, String(name))
      }
    }
  })

  it("a method that returns the collection returns the lazy one (chains keep writing to it)", () => {
    const lazy = lazyCollection<string, number>(() => new Collection())
    assert.strictEqual(lazy.set("a", 1), lazy)
    assert.strictEqual(lazy.sort(), lazy)
    assert.strictEqual(lazy.each(() => undefined), lazy)
    assert.strictEqual(lazyCollection<string, number>(() => new Collection()).tap(() => undefined).set("x", 1).size, 1)
  })

  it("stores through the collection it makes: its limits hold", () => {
    const lazy = lazyCollection<string, number>(() => new LimitedCollection({ maxSize: 2 }))
    fill(lazy)
    assert.deepStrictEqual([...lazy.keys()], ["b", "c"])
  })

  it("caches never share entries (the empty one they read before a write stays empty)", () => {
    const one = lazyCollection<string, number>(() => new Collection())
    const other = lazyCollection<string, number>(() => new Collection())
    one.set("a", 1)
    one.ensure("b", () => 2)
    lazyCollection<string, number>(() => new Collection()).tap((collection) => collection.set("t", 0))
    assert.strictEqual(other.size, 0)
    assert.isUndefined(other.get("a"))
    assert.deepStrictEqual([...other.keys()], [])
    assert.isFalse(isMaterialized(other))
  })
})
