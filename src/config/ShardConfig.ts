import { Config, Result, Option } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"
import { integerConfig } from "./settings"

/** The shards this process runs out of how many the bot has (several hosts split one bot). */
export interface ShardAssignment {
  /** Ascending, unique, each below `count`. */
  readonly ids: ReadonlyArray<number>
  readonly count: number
}

/** More shards than any bot runs: a typo such as `0-40000` fails instead of allocating a huge list. */
const MAX_SHARD_COUNT = 16_384

/**
 * `DISCORD_SHARD_IDS` as written: ids and ranges, comma-separated (`0-3`, `0,2`, `0-1,4`).
 * Every id must be below `count`.
 */
export const parseShardIds = (raw: string, count: number): Result.Result<ReadonlyArray<number>, string> => {
  const ids = new Set<number>()
  for (const part of raw.split(",").map((entry) => entry.trim())) {
    const range = /^(\d+)\s*(?:-\s*(\d+))?$/.exec(part)
    if (range === null) return Result.fail(`"${part}" is not a shard id or a range such as 0-3`)
    const first = Number(range[1])
    const last = range[2] === undefined ? first : Number(range[2])
    if (last < first) return Result.fail(`the range ${part} runs backwards`)
    if (last >= count) return Result.fail(`shard ${last} does not exist: DISCORD_SHARD_COUNT is ${count} (ids 0-${count - 1})`)
    for (let id = first; id <= last; id++) ids.add(id)
  }
  return Result.succeed([...ids].sort((a, b) => a - b))
}

/**
 * `DISCORD_SHARD_IDS` with `DISCORD_SHARD_COUNT`: none set ⇒ none (one process, or discord.js's
 * ShardingManager, decides); only the count ⇒ every shard of that count here; ids without the
 * count ⇒ an error naming the variable.
 */
export const shardAssignmentSetting: Config.Config<Option.Option<ShardAssignment>> = Config.all({
  ids: Config.option(Config.String("DISCORD_SHARD_IDS")).pipe(Config.map(Option.filter((raw) => raw.trim() !== ""))),
  count: Config.option(integerConfig("DISCORD_SHARD_COUNT"))
}).pipe(
  mapOrFail(({ count, ids }) => {
    if (Option.isNone(count)) {
      return Option.isNone(ids)
        ? Result.succeed(Option.none())
        : Result.fail(invalidSetting("DISCORD_SHARD_COUNT", "DISCORD_SHARD_COUNT is required with DISCORD_SHARD_IDS: the bot's total number of shards"))
    }
    if (count.value < 1 || count.value > MAX_SHARD_COUNT) {
      return Result.fail(invalidSetting("DISCORD_SHARD_COUNT", `must be between 1 and ${MAX_SHARD_COUNT} (got ${count.value})`))
    }
    if (Option.isNone(ids)) return Result.succeed(Option.some({ ids: Array.from({ length: count.value }, (_, id) => id), count: count.value }))
    return Result.mapBoth(parseShardIds(ids.value, count.value), {
      onFailure: (detail) => invalidSetting("DISCORD_SHARD_IDS", detail),
      onSuccess: (parsed) => Option.some({ ids: parsed, count: count.value })
    })
  })
)
