/**
 * The bot process of the scale bench (issue 27): the whole Discord front as `main` wires it (real
 * discord.js client, ChannelQueue, generation turns, reply sinks, typing, history) over a
 * scripted model, logged into a fake Discord that the bench runs in its own process. Forked
 * with IPC; env:
 *   TOKEN, API_BASE    the fake Discord
 *   BUDGET             `on` (the request budget, as shipped) or `off` (discord.js's own limiter only)
 *   SENTENCES, SENTENCE_MS  each reply: one tool call, then this many sentences, one per SENTENCE_MS
 * Messages: it sends `{ ready }` once logged in; on `{ go }` it starts measuring (event-loop
 * delay, CPU); on `{ report }` it answers with the measures and when each reply's model
 * stream finished, then exits.
 * Profiling (env): SCALE_MEMORY_TRACE=1 logs the largest of each part of the memory while the
 * replies stream; SCALE_ALLOCATION_PROFILE=<file> writes the sampling heap profiler's profile of
 * that time (collected objects included); SCALE_BUSY_SNAPSHOT_MIB=<n> (with the trace) writes a
 * heap snapshot to /tmp/busy.heapsnapshot once the heap passes n MiB; on `{ gc }`,
 * SCALE_HEAP_SPACES=1 logs V8's heap spaces, SCALE_HEAP_SNAPSHOT=<file> writes a snapshot and
 * SCALE_SMAPS=1 the largest mappings; SCALE_GC_TRACE=1 logs the GC pauses while the replies stream.
 */
import { ModelChoiceConfig } from "../../../src/config/ModelChoiceConfig"
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8"
import { Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { ChannelQueue } from "../../../src/chat/ChannelQueue"
import { TurnRunner } from "../../../src/chat/TurnRunner"
import { CredentialConfig } from "../../../src/config/CredentialConfig"
import { DiscordConfig } from "../../../src/config/DiscordConfig"
import { LoopConfig } from "../../../src/config/LoopConfig"
import { DiscordBot, discordServicesWith } from "../../../src/discord/DiscordBot"
import { DiscordClient } from "../../../src/discord/DiscordClient"
import { DiscordCredentialRoutes } from "../../../src/discord/DiscordCredentials"
import { HistoryCoverage } from "../../../src/discord/HistoryCoverage"
import { RequestBudget } from "../../../src/discord/RequestBudget"
import { toolSuccess } from "../../../src/domain/ToolResult"
import { KeyPool } from "../../../src/loop/KeyPool"
import { PendingContextStash } from "../../../src/loop/PendingContextStash"
import { RoutePlan } from "../../../src/loop/RoutePlan"
import { LanguageModel } from "../../../src/provider/LanguageModel"
import { callTool, finish, type ScriptedPass, sleep, text } from "../../../src/provider/scripted/Script"
import * as Scripted from "../../../src/provider/scripted/ScriptedModel"
import { ServerTurnAdmissionStore } from "../../../src/store/ServerTurnAdmissionStore"
import * as Stores from "../../../src/store/Stores"
import { UsageLedgerStore } from "../../../src/store/UsageLedgerStore"
import { DeliberateToolPlanner } from "../../../src/tools/deliberate/DeliberateToolPlanner"
import { GuildToolSource } from "../../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../../src/tools/InMemoryToolAffordances"
import { makeTool } from "../../../src/tools/Tool"
import { registerAll, ToolRegistry } from "../../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../../src/tools/ToolUsageStats"
import { guildMcpLayer } from "../../support/mcpServers/mcpTestKit"
import { scaleSentence } from "./scaleScript"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`scaleBot: ${name} is not set`)
  return value
}

const sentences = Number(process.env["SENTENCES"] ?? 60)
const sentenceMs = Number(process.env["SENTENCE_MS"] ?? 100)


const streamed = (id: string): ScriptedPass => [
  ...Array.from({ length: sentences }, (_, i) => [text(`${i === 0 ? "" : " "}${scaleSentence(id, i + 1)}`), sleep(`${sentenceMs} millis`)]).flat(),
  finish("stop")
]

const lookUp = makeTool({
  name: "look_up",
  description: "Looks something up.",
  category: "utility",
  parameters: Schema.Struct({}),
  execute: () => Effect.succeed(toolSuccess({ found: 42 }))
})

const replyId = (content: string | undefined) => /go (\d+)/.exec(content ?? "")?.[1] ?? "?"

const main = async () => {
  const finishedAt = new Map<string, number>()
  const config = DiscordConfig.make({ token: env("TOKEN"), apiBaseUrl: env("API_BASE") })
  const budget = process.env["BUDGET"] === "off" ? Layer.succeed(RequestBudget, RequestBudget.off) : RequestBudget.layer
  const client = DiscordClient.layerOver.pipe(Layer.provideMerge(Layer.merge(budget, HistoryCoverage.layer)))
  const discord = discordServicesWith(client).pipe(Layer.provide(config))
  const stores = Stores.layerMemory
  const scripted = Scripted.layer({
    script: ({ request }) => (request.functionHistory.length === 0 ? callTool("look_up", {}) : streamed(replyId(request.messages.at(-1)?.content)))
  })
  // The model as the turns see it: when a reply's text stream ends is recorded (the lag runs from there).
  const timedModel = Layer.effect(
    LanguageModel,
    Effect.map(LanguageModel, (model) => ({
      ...model,
      stream: (request: Parameters<typeof model.stream>[0]) =>
        request.functionHistory.length === 0
          ? model.stream(request)
          : model.stream(request).pipe(Stream.ensuring(Effect.sync(() => finishedAt.set(replyId(request.messages.at(-1)?.content), Date.now()))))
    }))
  ).pipe(Layer.provide(scripted))
  const registry = Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const made = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
      yield* Effect.orDie(registerAll(made, [lookUp]))
      return made
    })
  ).pipe(Layer.provide(Layer.merge(GuildToolSource.none, discord)), Layer.provide(stores))
  const core = Layer.mergeAll(
    timedModel,
    registry,
    LoopConfig.make({}),
    InMemoryToolAffordances.layer,
    ToolUsageStats.none,
    PendingContextStash.Default,
    RoutePlan.make(["model-a"], []),
    KeyPool.Default
  )
  const credentialConfig = CredentialConfig.make({})
  const credentials = Layer.mergeAll(DiscordCredentialRoutes, ServerTurnAdmissionStore.admissionLayer, UsageLedgerStore.ledgerLayer).pipe(
    Layer.provide(Layer.mergeAll(stores, credentialConfig, discord))
  )
  const queue = ChannelQueue.Default.pipe(Layer.provide(TurnRunner.Default), Layer.provide(Layer.mergeAll(core, discord, credentials)))
  const planner = DeliberateToolPlanner.layer.pipe(Layer.provide(Layer.mergeAll(stores, core, GuildToolSource.none)))
  const bot = DiscordBot.layer.pipe(
    Layer.provide(Layer.mergeAll(queue, stores, guildMcpLayer().layer, core, discord, config, credentialConfig, planner))
  )
  const runtime = ManagedRuntime.make(Layer.mergeAll(bot, discord).pipe(Layer.provide(ModelChoiceConfig.make(["model-a"], []))))
  const guilds = await runtime.runPromise(Effect.map(DiscordClient, (c) => c.guilds.cache.size))

  const delay = monitorEventLoopDelay({ resolution: 5 })
  let cpuAtGo = process.cpuUsage()
  process.on("message", (message: { readonly go?: true; readonly report?: true; readonly gc?: true }) => {
    if (message.gc === true) {
      // Run with --expose-gc: the idle measure is taken after a full collection (what V8's
      // memory reducer does to an idle process), not of garbage that start-up left.
      ;(globalThis as { gc?: () => void }).gc?.()
      const usage = process.memoryUsage()
      process.stderr.write(`scaleBot memory after gc: ${JSON.stringify(Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, Math.round(v / 1048576)])))}\n`)
      if (process.env["SCALE_HEAP_SPACES"] === "1") {
        const spaces = getHeapSpaceStatistics().map((space) => `${space.space_name} ${Math.round(space.space_size / 1048576)}/${Math.round(space.space_used_size / 1048576)}`)
        process.stderr.write(`scaleBot heap spaces (size/used MiB): ${spaces.join(", ")}\n`)
      }
      const snapshotPath = process.env["SCALE_HEAP_SNAPSHOT"]
      if (snapshotPath !== undefined) writeHeapSnapshot(snapshotPath)
      if (process.env["SCALE_SMAPS"] === "1") {
        const blocks = readFileSync("/proc/self/smaps", "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)
        const sized = blocks.map((block) => ({ head: block.split("\n")[0] ?? "", rss: Number(/\nRss:\s+(\d+)/.exec(block)?.[1] ?? 0) }))
        const byName = new Map<string, number>()
        for (const entry of sized) {
          const name = entry.head.split(/\s+/).slice(5).join(" ") || "[anon]"
          byName.set(name, (byName.get(name) ?? 0) + entry.rss)
        }
        process.stderr.write(`${[...byName].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([name, kb]) => `${Math.round(kb / 1024)} MiB ${name}`).join("\n")}\n`)
      }
      process.send?.({ collected: true, heapUsedMiB: usage.heapUsed / 1024 / 1024 })
    }
    if (message.go === true) {
      const allocationProfile = process.env["SCALE_ALLOCATION_PROFILE"]
      if (allocationProfile !== undefined) {
        // Every allocation while the replies stream, sampled, collected ones included (profiling).
        const session = new Session()
        session.connect()
        session.post("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
        process.on("message", (next: { readonly report?: true }) => {
          if (next.report === true) {
            session.post("HeapProfiler.stopSampling", (_error, result) => writeFileSync(allocationProfile, JSON.stringify(result.profile)))
          }
        })
      }
      if (process.env["SCALE_GC_TRACE"] === "1") {
        // GC pauses by kind while the replies stream (profiling): count, total and longest.
        const pauses = new Map<string, { count: number; totalMs: number; maxMs: number; over20: number }>()
        const observer = new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) {
            const kind = String((entry as { detail?: { kind?: number } }).detail?.kind ?? "?")
            const seen = pauses.get(kind) ?? { count: 0, totalMs: 0, maxMs: 0, over20: 0 }
            pauses.set(kind, { count: seen.count + 1, totalMs: seen.totalMs + entry.duration, maxMs: Math.max(seen.maxMs, entry.duration), over20: seen.over20 + (entry.duration > 20 ? 1 : 0) })
          }
        })
        observer.observe({ entryTypes: ["gc"] })
        process.on("message", (next: { readonly report?: true }) => {
          if (next.report === true) {
            observer.disconnect()
            process.stderr.write(`scaleBot GC pauses by kind (1 minor, 2 major, 4 incremental, 8 weak callbacks): ${JSON.stringify(Object.fromEntries([...pauses].map(([kind, p]) => [kind, { ...p, totalMs: Math.round(p.totalMs), maxMs: Math.round(p.maxMs) }])))}\n`)
          }
        })
      }
      if (process.env["SCALE_MEMORY_TRACE"] === "1") {
        // The largest of each part of the memory while the replies stream (profiling).
        const peaks: Record<string, number> = {}
        const spacesPeak: Record<string, number> = {}
        let snapshotTaken = false
        const sampler = setInterval(() => {
          for (const [key, value] of Object.entries(process.memoryUsage())) peaks[key] = Math.max(peaks[key] ?? 0, Math.round(value / 1048576))
          for (const space of getHeapSpaceStatistics()) spacesPeak[space.space_name] = Math.max(spacesPeak[space.space_name] ?? 0, Math.round(space.space_size / 1048576))
          const snapshotAt = Number(process.env["SCALE_BUSY_SNAPSHOT_MIB"] ?? Number.POSITIVE_INFINITY)
          if (process.memoryUsage().heapUsed / 1048576 > snapshotAt && !snapshotTaken) {
            snapshotTaken = true
            writeHeapSnapshot("/tmp/busy.heapsnapshot")
          }
        }, 50)
        process.once("beforeExit", () => clearInterval(sampler))
        process.on("message", (next: { readonly report?: true }) => {
          if (next.report === true) {
            clearInterval(sampler)
            process.stderr.write(`scaleBot peak memory (MiB): ${JSON.stringify(peaks)} spaces ${JSON.stringify(spacesPeak)}\n`)
          }
        })
      }
      cpuAtGo = process.cpuUsage()
      delay.reset()
      delay.enable()
    }
    if (message.report === true) {
      delay.disable()
      const cpu = process.cpuUsage(cpuAtGo)
      process.send?.({
        finishedAt: Object.fromEntries(finishedAt),
        cpuMs: (cpu.user + cpu.system) / 1000,
        eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
        eventLoopDelayMaxMs: delay.max / 1e6,
        peakRssMiB: process.resourceUsage().maxRSS / 1024,
        rssMiB: process.memoryUsage().rss / 1024 / 1024
      }, () => {
        void runtime.dispose().finally(() => process.exit(0))
      })
    }
  })
  process.send?.({ ready: true, guilds })
}

void main()
