/** A guild sticker chosen by `select_sticker_for_response`, sent with the reply. */
export interface Sticker {
  readonly id: string
  readonly name: string
}

export const Sticker = (sticker: Sticker): Sticker => ({ ...sticker })
