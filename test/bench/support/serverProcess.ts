/**
 * Starts `loopServer.ts` in its own process (so its event loop never competes with the
 * contender being measured) and talks to its control endpoints.
 */
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { request } from "undici"
import type { Records } from "./loopServer"

const here = dirname(fileURLToPath(import.meta.url))

export interface ServerProcess {
  /** `http://127.0.0.1:<port>/v1`, the OpenAI-compatible base URL. */
  readonly baseUrl: string
  /** `http://127.0.0.1:<port>`, where tools send their HTTP calls. */
  readonly toolUrl: string
  readonly records: (options?: { readonly clear?: boolean }) => Promise<Records>
  readonly parked: () => Promise<number>
  readonly release: () => Promise<number>
  readonly stop: () => Promise<void>
}

const getJson = async <A>(url: string, method: "GET" | "POST" = "GET"): Promise<A> => {
  const response = await request(url, { method })
  return (await response.body.json()) as A
}

/** The control API of a server that is already running (e.g. started by a parent process). */
export const connectLoopServer = (baseUrl: string, toolUrl: string): Omit<ServerProcess, "stop"> => {
  const control = baseUrl.replace(/\/v1$/, "")
  return {
    baseUrl,
    toolUrl,
    records: (options = {}) => getJson<Records>(`${control}/__records${options.clear === true ? "?clear=1" : ""}`),
    parked: () => getJson<{ parked: number }>(`${control}/__parked`).then((body) => body.parked),
    release: () => getJson<{ released: number }>(`${control}/__release`, "POST").then((body) => body.released)
  }
}

export const spawnLoopServer = () =>
  new Promise<ServerProcess>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(here, "loopServer.ts")], { stdio: ["pipe", "pipe", "inherit"] })
    let output = ""
    let started = false
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    child.stdout.on("data", (piece: Buffer) => {
      output += piece.toString("utf8")
      const match = /PORTS (\d+) (\d+)/.exec(output)
      if (match === null || started) return
      started = true
      resolve({
        ...connectLoopServer(`http://127.0.0.1:${match[1]}/v1`, `http://127.0.0.1:${match[2]}`),
        stop: () => {
          child.stdin.end()
          return exited
        }
      })
    })
    child.once("exit", (code) => {
      if (!started) reject(new Error(`loop server exited with ${code}`))
    })
  })
