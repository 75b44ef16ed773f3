/** Loads only the contender asked for (workers measure one contender in a fresh process). */
import type { Contender, ContenderOptions } from "./contender"

export type ContenderId = "loopcord" | "aisdk" | "hand"

export const contenderIds: ReadonlyArray<{ readonly id: ContenderId; readonly name: string }> = [
  { id: "loopcord", name: "loopcord" },
  { id: "aisdk", name: "AI SDK" },
  { id: "hand", name: "hand-written" }
]

export const loadContender = async (id: string, options: ContenderOptions): Promise<Contender> => {
  switch (id) {
    case "loopcord":
      return (await import("./loopcordContender")).makeLoopcord(options)
    // loopcord logging as a deployed bot does (info, JSON lines): the logging cost of a warm process.
    case "loopcord-info-json": {
      const { makeLoopcord, productionLogs } = await import("./loopcordContender")
      return makeLoopcord(options, productionLogs)
    }
    case "aisdk":
      return (await import("./aiSdkContender")).makeAiSdk(options)
    case "hand":
      return (await import("./handLoopContender")).makeHandLoop(options)
    default:
      throw new Error(`unknown contender ${id}`)
  }
}
