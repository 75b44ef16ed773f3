/**
 * Holds back the text after the last sentence boundary of a streamed reply, so that a reply cut
 * by the output budget can end cleanly at a sentence (the held part is the result's
 * `naiContinuationPrefill`, carried to the retry). What is released is final; `pending` is the
 * unfinished sentence. A boundary is a sentence-ending mark followed by whitespace, or a line
 * break. The single quote is not one (`don't`, `it's`). Past `maxPendingChars` without a
 * boundary the text is released anyway.
 */

const BOUNDARY = /[.!?…。！？"”*~)\]」』—]\s+|\n/g
const ENDS_AT_BOUNDARY = /(?:[.!?…。！？"”*~)\]」』—]|\n)\s*$/

export class SentenceHold {
  private held = ""

  constructor(private readonly maxPendingChars = 2000) {}

  /** Adds text; returns what may be shown now. */
  feed(text: string): string {
    this.held += text
    let cut = 0
    for (const match of this.held.matchAll(BOUNDARY)) cut = match.index + match[0].length
    if (cut === 0 && this.held.length > this.maxPendingChars) cut = this.held.length
    const released = this.held.slice(0, cut)
    this.held = this.held.slice(cut)
    return released
  }

  get pending(): string {
    return this.held
  }

  /** Whether the pending text already ends a sentence (so nothing is unfinished). */
  get pendingEndsSentence(): boolean {
    return this.held.trim().length === 0 || ENDS_AT_BOUNDARY.test(this.held)
  }

  /** Releases everything held. */
  flush(): string {
    const released = this.held
    this.held = ""
    return released
  }
}
