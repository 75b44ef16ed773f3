/**
 * Loopback only, whatever the code under test does: every test process (the vitest workers, via
 * setup.ts, and every process they spawn, via NODE_OPTIONS) refuses a TCP connection to an
 * address outside 127.0.0.0/8 and ::1, a DNS query to a non-loopback name server, and a name
 * lookup of anything but `localhost`. A refusal fails the attempt with a `LOOPBACK_GUARD` error and
 * says so on stderr, so a test that would have reached the network fails loudly instead.
 *
 * Plain JavaScript so the compiled app's child processes can load it with `--import`.
 */
import childProcess from "node:child_process"
import dns from "node:dns"
import dnsPromises from "node:dns/promises"
import net from "node:net"
import { syncBuiltinESMExports } from "node:module"
import { fileURLToPath } from "node:url"

const INSTALLED = Symbol.for("loopcord.loopbackGuard")

const isLoopbackAddress = (address) => {
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address
  return (net.isIPv4(plain) && plain.startsWith("127.")) || plain === "::1"
}
const isLocalhostName = (host) => host === "localhost" || host.endsWith(".localhost")

const refusal = (what) => {
  process.stderr.write(`[loopback guard] refused ${what}\n`)
  return Object.assign(new Error(`loopback guard: refused ${what} (tests reach loopback only)`), { code: "LOOPBACK_GUARD" })
}

const install = () => {
  if (globalThis[INSTALLED] === true) return
  globalThis[INSTALLED] = true

  // Name lookups: IP literals pass through (no query is made); localhost is answered from the
  // hosts file as usual; every other name is refused before a resolver is asked.
  const originalLookup = dns.lookup
  const guardedLookup = function(hostname, options, callback) {
    const done = typeof options === "function" ? options : callback
    if (typeof hostname === "string" && net.isIP(hostname) === 0 && !isLocalhostName(hostname)) {
      process.nextTick(() => done(refusal(`a lookup of ${hostname}`)))
      return {}
    }
    return originalLookup.apply(this, arguments)
  }
  dns.lookup = guardedLookup
  const originalPromiseLookup = dnsPromises.lookup
  dnsPromises.lookup = function(hostname, ...rest) {
    if (typeof hostname === "string" && net.isIP(hostname) === 0 && !isLocalhostName(hostname)) {
      return Promise.reject(refusal(`a lookup of ${hostname}`))
    }
    return originalPromiseLookup.call(this, hostname, ...rest)
  }

  // c-ares queries go to the configured name servers: only loopback ones (a test's fake DNS).
  const queryMethods = ["resolve", "resolve4", "resolve6", "resolveAny", "resolveCaa", "resolveCname", "resolveMx",
    "resolveNaptr", "resolveNs", "resolvePtr", "resolveSoa", "resolveSrv", "resolveTxt", "reverse"]
  // getServers() gives "1.2.3.4", "1.2.3.4:53", "::1" or "[::1]:53".
  const serverAddress = (server) =>
    server.startsWith("[") ? server.slice(1, server.indexOf("]")) : server.split(":").length === 2 ? server.split(":")[0] : server
  const serversAreLoopback = (resolver) => resolver.getServers().every((server) => isLoopbackAddress(serverAddress(server)))
  for (const [Resolver, promised] of [[dns.Resolver, false], [dnsPromises.Resolver, true]]) {
    for (const method of queryMethods) {
      const original = Resolver.prototype[method]
      if (typeof original !== "function") continue
      Resolver.prototype[method] = function(...args) {
        if (serversAreLoopback(this)) return original.apply(this, args)
        const error = refusal(`a DNS query (${method} ${String(args[0])}) to ${this.getServers().join(", ")}`)
        if (promised) return Promise.reject(error)
        const callback = args[args.length - 1]
        if (typeof callback === "function") process.nextTick(() => callback(error))
        return undefined
      }
    }
  }
  const defaultResolver = new dns.Resolver()
  const defaultPromiseResolver = new dnsPromises.Resolver()
  for (const method of queryMethods) {
    if (typeof dns[method] === "function") dns[method] = (...args) => defaultResolver[method](...args)
    if (typeof dnsPromises[method] === "function") dnsPromises[method] = (...args) => defaultPromiseResolver[method](...args)
  }

  // TCP: the address a socket connects to, literal or looked up, must be loopback. Unix sockets pass.
  const originalConnect = net.Socket.prototype.connect
  net.Socket.prototype.connect = function(...args) {
    const normalized = Array.isArray(args[0])
    const first = normalized ? args[0][0] : args[0]
    const options = typeof first === "object" && first !== null
      ? first
      : typeof first === "string" && !/^\d+$/.test(first)
      ? { path: first }
      : { port: first, host: typeof args[1] === "string" ? args[1] : undefined }
    if (options.path !== undefined) return originalConnect.apply(this, args)
    const host = options.host ?? "localhost"
    if (net.isIP(host) !== 0) {
      if (isLoopbackAddress(host)) return originalConnect.apply(this, args)
      process.nextTick(() => this.destroy(refusal(`a connection to ${host}:${options.port}`)))
      return this
    }
    const lookup = options.lookup ?? dns.lookup
    const checkedLookup = (hostname, lookupOptions, callback) =>
      lookup(hostname, lookupOptions, (error, address, family) => {
        if (error) return callback(error, address, family)
        const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address]
        const outside = addresses.find((candidate) => !isLoopbackAddress(candidate))
        if (outside !== undefined) return callback(refusal(`a connection to ${hostname} (${outside})`))
        callback(null, address, family)
      })
    if (normalized || (typeof first === "object" && first !== null)) {
      options.lookup = checkedLookup
      return originalConnect.apply(this, args)
    }
    const callback = args.find((arg) => typeof arg === "function")
    return originalConnect.call(this, { ...options, lookup: checkedLookup }, ...(callback === undefined ? [] : [callback]))
  }

  // Children: the guard goes with every process a test starts, whatever env it was given.
  const importFlag = `--import=${new URL(import.meta.url).href}`
  const withGuard = (env) => {
    const base = env ?? process.env
    const current = base.NODE_OPTIONS ?? ""
    return current.includes(fileURLToPath(import.meta.url)) || current.includes(importFlag)
      ? base
      : { ...base, NODE_OPTIONS: `${current} ${importFlag}`.trim() }
  }
  const patchOptions = (args, optionsIndexCandidates) => {
    for (const index of optionsIndexCandidates) {
      const candidate = args[index]
      if (candidate !== undefined && candidate !== null && typeof candidate === "object" && !Array.isArray(candidate)) {
        args[index] = { ...candidate, env: withGuard(candidate.env) }
        return args
      }
    }
    // No options object: insert one after the arguments array (or the command).
    const at = Array.isArray(args[1]) ? 2 : 1
    const tail = args.slice(at)
    return [...args.slice(0, at), { env: withGuard(undefined) }, ...tail]
  }
  for (const name of ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"]) {
    const original = childProcess[name]
    childProcess[name] = function(...args) {
      const firstObject = args.findIndex((arg, index) => index > 0 && arg !== null && typeof arg === "object" && !Array.isArray(arg))
      return original.apply(this, patchOptions(args, firstObject === -1 ? [] : [firstObject]))
    }
  }
  // ESM importers of these builtins see the patched functions too.
  syncBuiltinESMExports()
}

install()
