import { Effect, Layer, Ref } from "effect"
import { FetchConfig, type FetchSettings } from "../../../src/config/FetchConfig"
import type { ToolArgs } from "../../../src/domain/FunctionCall"
import type { ToolResult } from "../../../src/domain/ToolResult"
import { AddressPolicy, DnsResolver, type DnsResolverShape } from "../../../src/fetch/AddressPolicy"
import { HtmlConverter } from "../../../src/fetch/html/HtmlConverter"
import { SafeHttp } from "../../../src/fetch/SafeHttp"
import { fetchUrlTool } from "../../../src/tools/builtin/fetchUrl/FetchUrlTool"
import type { Tool } from "../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../src/tools/ToolContext"
import { loopbackConnector } from "./loopbackConnector"
import { testToolContext, type TestToolContext } from "../tools/testToolContext"


export interface WebKitOptions {
  readonly production: boolean
  readonly allowPrivateNetwork?: boolean
  readonly settings?: Partial<Omit<FetchSettings, "production" | "allowPrivateNetwork">>
  /** Simulated DNS: name → answers (unknown names fail like NXDOMAIN). */
  readonly dns?: Readonly<Record<string, ReadonlyArray<string>>>
  /** A resolver of your own (rebinding, counting); overrides `dns`. */
  readonly resolver?: DnsResolverShape
  /** Pretend-public address → loopback address the test connector really dials. */
  readonly translate?: Readonly<Record<string, string>>
}

/**
 * The real fetch stack (FetchConfig, AddressPolicy, SafeHttp, HtmlConverter) over simulated DNS and the
 * loopback-only test connector: nothing can leave 127.0.0.0/8 or ::1.
 */
export const webStack = (options: WebKitOptions) => {
  const connector = loopbackConnector(options.translate)
  const resolver =
    options.resolver === undefined ? DnsResolver.fromTable(options.dns ?? {}) : Layer.succeed(DnsResolver, options.resolver)
  const base = Layer.mergeAll(
    FetchConfig.make(
      { production: options.production, ...(options.allowPrivateNetwork === undefined ? {} : { allowPrivateNetwork: options.allowPrivateNetwork }) },
      options.settings
    ),
    AddressPolicy.make({ allowPrivateNetwork: options.allowPrivateNetwork ?? !options.production }).pipe(Layer.provide(resolver)),
    connector.layer
  )
  return { layer: Layer.merge(SafeHttp.Default, HtmlConverter.Default).pipe(Layer.provideMerge(base)), connector }
}

/** fetch_url built on `webStack`, with a helper that runs one call under a fresh ToolContext. */
export const fetchUrlKit = (options: WebKitOptions) => {
  const stack = webStack(options)
  const call = (tool: Tool, args: ToolArgs, overrides: Partial<ToolContextShape> = {}): Effect.Effect<ToolResult & { readonly progress: ReadonlyArray<string> }> =>
    Effect.gen(function* () {
      const { context, progress } = yield* testToolContext(overrides)
      const result = yield* Effect.provideService(tool.execute(args), ToolContext, context).pipe(Effect.orDie)
      return { ...result, progress: yield* Ref.get(progress) }
    })
  return {
    connector: stack.connector,
    /** The tool, with the stack (SafeHttp's connection pool) alive for the current scope. */
    tool: Effect.flatMap(Layer.build(stack.layer), (context) => Effect.provide(fetchUrlTool, context)),
    call
  }
}

export { testToolContext, type TestToolContext }
