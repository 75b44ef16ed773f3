import { Config } from "effect"

/** Where the terminal saves generated media (`MEDIA_DIR`, default `./data/media`). */
export const mediaDirSetting: Config.Config<string> = Config.String("MEDIA_DIR").pipe(
  Config.withDefault("./data/media"),
  Config.map((dir) => (dir.trim() === "" ? "./data/media" : dir.trim()))
)
