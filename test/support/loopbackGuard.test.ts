import { spawnSync } from "node:child_process"
import { lookup } from "node:dns/promises"
import { Resolver } from "node:dns/promises"
import { createServer, connect, type AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"

// The probes below aim at addresses outside loopback on purpose. Where `unshare -n` works, the file
// re-runs itself in a network namespace that has only `lo`, so a broken guard still cannot send
// a packet anywhere; elsewhere the probes aim only at reserved documentation addresses.
const NAMESPACE_ENV = "LOOPCORD_GUARD_NETNS"
const insideNamespace = process.env[NAMESPACE_ENV] === "1"
const namespaceWorks =
  !insideNamespace && spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { stdio: "ignore", timeout: 10_000 }).status === 0

const connectOutcome = (host: string, port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect({ host, port })
    socket.once("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })

if (namespaceWorks) {
  describe("the loopback guard every test process runs under", () => {
    it("passes inside a loopback-only network namespace (unshare -n)", () => {
      const run = spawnSync("unshare", ["-n", "sh", "-c", `ip link set lo up && exec "${process.execPath}" node_modules/vitest/vitest.mjs run test/support/loopbackGuard.test.ts`], {
        cwd: process.cwd(),
        env: { ...process.env, [NAMESPACE_ENV]: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
        encoding: "utf8",
        timeout: 60_000
      })
      const output = `${run.stdout}\n${run.stderr}`
      expect(run.status, output.slice(-4000)).toBe(0)
      expect(/Tests\s+(\d+) passed/.exec(output)?.[1], output.slice(-2000)).toBe("5")
    }, 90_000)
  })
} else describe("the loopback guard every test process runs under", () => {
  it("lets a loopback connection through", async () => {
    const server = createServer((socket) => socket.end())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    expect(await connectOutcome("127.0.0.1", port)).toBe("connected")
    expect(await connectOutcome("localhost", port)).toBe("connected")
    server.close()
  })

  it("refuses a connection to a non-loopback address, literal or by name, before any packet", async () => {
    expect(await connectOutcome("198.51.100.1", 80)).toBe("LOOPBACK_GUARD")
    expect(await connectOutcome("192.0.2.7", 443)).toBe("LOOPBACK_GUARD")
    expect(await connectOutcome("guard-probe.invalid", 443)).toBe("LOOPBACK_GUARD")
  })

  it("refuses fetch() to the public internet (undici inside Node)", async () => {
    const error: unknown = await fetch("http://192.0.2.7/html/?q=x").then(() => "answered", (e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(String((error as Error & { cause?: unknown }).cause)).toContain("loopback guard")
  })

  it("refuses name lookups and DNS queries to a non-loopback name server", async () => {
    await expect(lookup("guard-probe.invalid")).rejects.toMatchObject({ code: "LOOPBACK_GUARD" })
    const resolver = new Resolver()
    resolver.setServers(["192.0.2.53"])
    await expect(resolver.resolve4("guard-probe.invalid")).rejects.toMatchObject({ code: "LOOPBACK_GUARD" })
    expect((await lookup("localhost")).address).toMatch(/^(127\.0\.0\.1|::1)$/)
  })

  it("goes with every child process, even one given its own environment", () => {
    const child = spawnSync(process.execPath, [
      "-e",
      "require('node:net').connect({host:'192.0.2.7',port:80}).on('error',(e)=>{process.stdout.write(String(e.code));process.exit(0)})"
    ], { env: { PATH: process.env["PATH"] ?? "" }, encoding: "utf8", timeout: 10_000 })
    expect(child.stdout).toBe("LOOPBACK_GUARD")
  })
})
