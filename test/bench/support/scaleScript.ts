/** The replies of the scale bench: sentence `n` of reply `id`, so the bench checks every one arrived, once. */
export const scaleSentence = (id: string, n: number) => `Reply ${id} sentence ${n} has a few words.`
export const scaleAnswer = (id: string, count: number) => Array.from({ length: count }, (_, i) => scaleSentence(id, i + 1)).join(" ")
