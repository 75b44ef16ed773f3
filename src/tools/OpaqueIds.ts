import { Context, Effect, Option } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"

/**
 * Short ids the model sees instead of internal references (docs/architecture.md, Tool availability and assembly): a tool argument
 * named after one of them is resolved before dispatch, and the id as the model wrote it is kept
 * under `__original_<key>`. The model's own call (what is replayed to it) is never changed.
 */
export class OpaqueIds extends Context.Service<OpaqueIds, {
  /** The internal reference behind a `media_id`, or None when the id is unknown. */
  readonly resolveMediaId: (id: string) => Effect.Effect<Option.Option<string>>
}>()("loopcord/tools/OpaqueIds") {}

/** Argument keys that carry opaque ids. */
const OPAQUE_ID_KEYS = ["media_id"] as const

const originalKey = (key: string): string => `__original_${key}`

/** Resolution failed: the reason fed back to the model. */
interface UnknownOpaqueId {
  readonly key: string
  readonly id: string
}

/**
 * `args` with each opaque id replaced by its reference and the original kept beside it; an
 * empty or absent id is left alone (the tool decides whether it is required). A model-written
 * `__original_*` key is dropped: only resolution may set one.
 */
export const resolveOpaqueIds = (
  args: ToolArgs,
  ids: OpaqueIds["Service"]
): Effect.Effect<{ readonly _tag: "Resolved"; readonly args: ToolArgs } | { readonly _tag: "Unknown"; readonly unknown: UnknownOpaqueId }> => {
  // Most calls carry no id: they pass through without any work.
  const keys = Object.keys(args)
  if (!keys.some((key) => key.startsWith("__original_") || (OPAQUE_ID_KEYS as ReadonlyArray<string>).includes(key))) {
    return Effect.succeed({ _tag: "Resolved", args } as const)
  }
  return Effect.gen(function*() {
    const resolved: Record<string, unknown> = Object.fromEntries(Object.entries(args).filter(([key]) => !key.startsWith("__original_")))
    for (const key of OPAQUE_ID_KEYS) {
      const value = args[key]
      if (typeof value !== "string" || value.trim() === "") continue
      const id = value.trim()
      const reference = yield* ids.resolveMediaId(id)
      if (Option.isNone(reference)) return { _tag: "Unknown", unknown: { key, id } } as const
      resolved[key] = reference.value
      resolved[originalKey(key)] = id
    }
    return { _tag: "Resolved", args: resolved } as const
  })
}

export const unknownIdMessage = ({ id, key }: UnknownOpaqueId): string =>
  `Unknown ${key} "${id.slice(0, 80)}": it is not an id shown in this conversation. ` +
  `Use a ${key} exactly as it appears in an image line of the conversation (e.g. img_ab12cd34); never a URL.`
