/**
 * The port's other endings, checked on both sides alike before the bench counts anything (the
 * bench only exercises the happy path): a tool that never settles ends at its timeout and the
 * loop goes on; a stream that stalls ends at its inactivity budget and its socket is closed; a
 * /kill mid-stream stops the pass and closes the socket. Short budgets (300 ms).
 *
 *   node --import tsx spike/effect4/harness/smoke.ts <v3|v4> <baseUrl> <toolUrl>
 *
 * Prints one line per check and exits non-zero when one fails.
 */
import { request } from "node:http"
import type { Contender } from "../../../test/bench/support/contender"
import { CONTINUED_TEXT, expectedLoopText, type Records } from "../../../test/bench/support/loopServer"
import { sleep } from "../../../test/bench/support/stats"
import type { SpikeContenderOptions } from "../v4/contender"

const [side = "v4", baseUrl = "", toolUrl = ""] = process.argv.slice(2)

const records = () =>
  new Promise<Records>((resolve, reject) => {
    request(`${baseUrl.replace(/\/v1$/, "")}/__records`, (response) => {
      const pieces: Array<Buffer> = []
      response.on("data", (piece: Buffer) => pieces.push(piece))
      response.on("end", () => resolve(JSON.parse(Buffer.concat(pieces).toString("utf8")) as Records))
    }).on("error", reject).end()
  })

// A wait that nothing will ever end leaves no handle behind: Node would exit 0 mid-check.
process.on("beforeExit", () => {
  process.stdout.write(`FAIL ${side} the event loop emptied before the checks ended (a wait nothing will end)\n`)
  process.exit(1)
})

const main = async () => {
  const loaded = (await import(side === "v3" ? "../v3/contender" : "../v4/contender")) as {
    readonly makeContender: (options: SpikeContenderOptions) => Promise<Contender>
  }
  const budget = 300
  const contender = await loaded.makeContender({ baseUrl, toolUrl, tools: ["echo", "never_tool"], maxSteps: 21, budgetMs: budget })
  const failures: Array<string> = []
  const checkThat = (ok: boolean, what: string) => {
    process.stdout.write(`${ok ? "ok  " : "FAIL"} ${side} ${what}\n`)
    if (!ok) failures.push(what)
  }
  const id = (name: string) => `${side}smoke${name}${Date.now().toString(36)}`

  const happy = id("loop")
  const loop = await contender.start(`turn:${happy}:loop:2`).done
  checkThat(loop.status === "completed" && loop.text === expectedLoopText(happy, 2), `two echo steps, then the answer (${loop.status})`)

  const hang = id("hang")
  const started = Date.now()
  const hung = await contender.start(`turn:${hang}:hangtool`).done
  const took = Date.now() - started
  checkThat(hung.status === "completed" && hung.text === CONTINUED_TEXT && took >= budget && took < budget + 1500,
    `a tool that never settles times out after ${budget} ms and the loop goes on (${hung.status}, ${took} ms)`)

  const stall = id("stall")
  const stalled = await contender.start(`turn:${stall}:killstream`).done
  await sleep(100)
  const stallRecord = (await records()).turns[stall]?.[0]
  checkThat(stalled.status === "Timeout" && stalled.text === "The reply starts " && stallRecord?.closed !== undefined,
    `a stalled stream ends at the inactivity budget and its socket is closed (${stalled.status}, closed: ${stallRecord?.closed !== undefined})`)

  const kill = id("kill")
  const handle = contender.start(`turn:${kill}:killstream`)
  while (handle.firstDeltaAt() === undefined) await sleep(5)
  handle.kill()
  const killed = await handle.done
  await sleep(100)
  const killRecord = (await records()).turns[kill]?.[0]
  checkThat(killed.status === "StoppedByUser" && killed.text === "The reply starts " && killRecord?.closed !== undefined,
    `a /kill mid-stream stops the pass and closes the socket (${killed.status}, closed: ${killRecord?.closed !== undefined})`)

  await contender.close()
  process.exit(failures.length === 0 ? 0 : 1)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
