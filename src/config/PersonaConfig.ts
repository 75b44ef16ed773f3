import { Config, Option } from "effect"
import type { Persona } from "../domain/Persona"

export const DEFAULT_PERSONA_NAME = "loopcord"
export const DEFAULT_SYSTEM_PROMPT =
  "You are loopcord, a helpful assistant in a chat. Answer concisely. Use the tools you are given when they help; " +
  "tell the user plainly when a tool fails instead of pretending it worked."

const optionalText = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Config.map((value) => Option.getOrUndefined(Option.filter(Option.map(value, (text) => text.trim()), (text) => text.length > 0)))
  )

/** The bot's persona: `BOT_PERSONA_NAME` and `BOT_SYSTEM_PROMPT`. */
export const personaSetting: Config.Config<Persona> = Config.all({
  name: optionalText("BOT_PERSONA_NAME"),
  systemPrompt: optionalText("BOT_SYSTEM_PROMPT")
}).pipe(
  Config.map(({ name, systemPrompt }): Persona => ({
    id: undefined,
    name: name ?? DEFAULT_PERSONA_NAME,
    avatarUrl: undefined,
    systemPrompt: systemPrompt ?? DEFAULT_SYSTEM_PROMPT
  }))
)
