/** Cuts `text` at the given offsets (taken modulo its length + 1, sorted, deduplicated): for property tests over any chunking. */
export const cutAt = (text: string, offsets: ReadonlyArray<number>): ReadonlyArray<string> => {
  const points = [...new Set(offsets.map((offset) => offset % (text.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<string> = []
  let previous = 0
  for (const point of points) {
    pieces.push(text.slice(previous, point))
    previous = point
  }
  pieces.push(text.slice(previous))
  return pieces
}
