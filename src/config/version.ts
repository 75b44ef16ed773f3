import * as FileSystem from "effect/FileSystem"
import { Data, Effect, Option, Schema } from "effect"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

class VersionUnknownError extends Data.TaggedError("VersionUnknownError")<{ readonly detail: string }> {
  override get message(): string {
    return `cannot tell loopcord's version: ${this.detail}`
  }
}

const PackageJson = Schema.fromJsonString(Schema.Struct({ name: Schema.String, version: Schema.String }))

/** Directories above this module, nearest first (src/config, src, the root; dist, the root for a build). */
const ancestors = (from: string, depth: number): ReadonlyArray<string> =>
  Array.from({ length: depth }, (_, level) => level).reduce<Array<string>>(
    (dirs) => [...dirs, dirname(dirs[dirs.length - 1] ?? from)],
    [from]
  )

/**
 * loopcord's version (`--version`): from the nearest `package.json` named loopcord above this
 * module, so it holds for the sources (tsx) and for a build in `dist/` alike.
 */
export const packageVersion: Effect.Effect<string, VersionUnknownError, FileSystem.FileSystem> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  for (const dir of ancestors(dirname(fileURLToPath(import.meta.url)), 3)) {
    const text = yield* Effect.option(fs.readFileString(join(dir, "package.json")))
    const parsed = Option.flatMap(text, Schema.decodeUnknownOption(PackageJson))
    if (Option.isSome(parsed) && parsed.value.name === "loopcord") return parsed.value.version
  }
  return yield* new VersionUnknownError({ detail: "no package.json named loopcord above the program" })
})
