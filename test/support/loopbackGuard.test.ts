import { spawnSync } from "node:child_process"
import { lookup } from "node:dns/promises"
import { Resolver } from "node:dns/promises"
import { createServer, connect, type AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"

const connectOutcome = (host: string, port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect({ host, port })
    socket.once("connect", () => {
      socket.destroy()
      resolve("connected")
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })

describe("the loopback guard every test process runs under", () => {
  it("lets a loopback connection through", async () => {
    const server = createServer((socket) => socket.end())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    expect(await connectOutcome("127.0.0.1", port)).toBe("connected")
    expect(await connectOutcome("localhost", port)).toBe("connected")
    server.close()
  })

  it("refuses a connection to a non-loopback address, literal or by name, before any packet", async () => {
    expect(await connectOutcome("10.255.255.1", 80)).toBe("LOOPBACK_GUARD")
    expect(await connectOutcome("192.0.2.7", 443)).toBe("LOOPBACK_GUARD")
    expect(await connectOutcome("example.com", 443)).toBe("LOOPBACK_GUARD")
  })

  it("refuses fetch() to the public internet (undici inside Node)", async () => {
    const error: unknown = await fetch("https://html.duckduckgo.com/html/?q=x").then(() => "answered", (e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(String((error as Error & { cause?: unknown }).cause)).toContain("loopback guard")
  })

  it("refuses name lookups and DNS queries to a non-loopback name server", async () => {
    await expect(lookup("example.com")).rejects.toMatchObject({ code: "LOOPBACK_GUARD" })
    const resolver = new Resolver()
    resolver.setServers(["192.0.2.53"])
    await expect(resolver.resolve4("example.com")).rejects.toMatchObject({ code: "LOOPBACK_GUARD" })
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
