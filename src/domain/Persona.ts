/** Who the bot speaks as in a turn: a name, an avatar and the system prompt that shapes it. */
export interface Persona {
  /** The stored persona's id; undefined for the operator's default persona. */
  readonly id: string | undefined
  readonly name: string
  readonly avatarUrl: string | undefined
  readonly systemPrompt: string
}
