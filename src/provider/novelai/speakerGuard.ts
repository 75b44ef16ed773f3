/**
 * Stops a NovelAI reply where the model starts another speaker's turn. The prompt is a flat
 * chat log (`Name: message` lines), so a text model that is not stopped goes on writing the
 * users' lines too. A line that begins with a known speaker's label (`Ana:`, the bot's own
 * `Name:`, `User:`) ends the reply before that line; a line that may still become one is held
 * until it is decided.
 */

interface GuardStep {
  readonly released: string
  /** A turn boundary was found: nothing after `released` belongs to the reply. */
  readonly stop: boolean
}

export class SpeakerGuard {
  private held = ""
  private readonly labels: ReadonlyArray<string>

  constructor(speakers: Iterable<string>) {
    const labels = new Set<string>()
    for (const speaker of speakers) {
      const name = speaker.trim()
      if (name.length > 0 && name.length <= 64 && !name.includes("\n")) labels.add(`${name}:`)
    }
    this.labels = [...labels]
  }

  feed(text: string): GuardStep {
    let rest = this.held + text
    this.held = ""
    let released = ""
    while (true) {
      const newline = rest.indexOf("\n")
      if (newline < 0) return { released: released + rest, stop: false }
      released += rest.slice(0, newline)
      // Decide the line that starts after the line break(s).
      let start = newline
      while (start < rest.length && (rest[start] === "\n" || rest[start] === "\r")) start++
      const line = rest.slice(start).trimStart()
      if (this.labels.some((label) => line.startsWith(label))) return { released, stop: true }
      const lineEnd = rest.indexOf("\n", start)
      const undecided = lineEnd < 0 && this.labels.some((label) => label.startsWith(line))
      if (undecided) {
        this.held = rest.slice(newline)
        return { released, stop: false }
      }
      released += rest.slice(newline, start)
      rest = rest.slice(start)
    }
  }

  /** The stream ended: a held line that never became a label is text. */
  end(): string {
    const held = this.held
    this.held = ""
    return held
  }
}
