import { readFile } from "node:fs/promises"
import { isIP } from "node:net"
import { Clock, Effect, Option, Ref } from "effect"

/** Host name (lower case) → its addresses in file order. */
export type HostsTable = ReadonlyMap<string, ReadonlyArray<string>>

/**
 * Parses a hosts(5) file: `address name [aliases…]` per line, `#` starts a comment. Lines
 * whose first field is not an IP address are ignored; a name listed twice keeps every address.
 */
export const parseHostsFile = (text: string): HostsTable => {
  const table = new Map<string, Array<string>>()
  for (const line of text.split(/\r?\n/)) {
    const [address, ...names] = (line.split("#")[0] ?? "").trim().split(/\s+/)
    if (address === undefined || isIP(address.split("%")[0] ?? "") === 0) continue
    const bare = address.split("%")[0] ?? address
    for (const raw of names) {
      const name = raw.toLowerCase().replace(/\.+$/, "")
      if (name === "") continue
      const addresses = table.get(name) ?? []
      if (!addresses.includes(bare)) addresses.push(bare)
      table.set(name, addresses)
    }
  }
  return table
}

const SYSTEM_HOSTS_PATH =
  process.platform === "win32" ? `${process.env["SystemRoot"] ?? "C:\\Windows"}\\System32\\drivers\\etc\\hosts` : "/etc/hosts"

/** How long a read hosts file is trusted before it is read again. */
const HOSTS_TTL_MS = 30_000

/**
 * The hosts file as the resolver consults it before DNS (like getaddrinfo's "files" source),
 * re-read at most every 30 s (Clock time). An unreadable file counts as empty.
 */
export const makeHostsFileReader = (read: () => Promise<string> = () => readFile(SYSTEM_HOSTS_PATH, "utf8")) =>
  Effect.gen(function* () {
    const cached = yield* Ref.make(Option.none<{ readonly table: HostsTable; readonly readAt: number }>())
    return Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const current = yield* Ref.get(cached)
      if (Option.isSome(current) && now - current.value.readAt < HOSTS_TTL_MS) return current.value.table
      const table = yield* Effect.promise(() => read().then(parseHostsFile, () => parseHostsFile("")))
      yield* Ref.set(cached, Option.some({ table, readAt: now }))
      return table
    })
  })
