/** Discord's length limits on what the bot writes, and the one way text is cut to fit them. */
export const DiscordLimit = {
  content: 2000,
  embedTitle: 256,
  embedDescription: 4096,
  embedFooter: 2048
} as const

/** `text` cut to `limit` characters with an ellipsis (never a dangling high surrogate). */
export const clip = (text: string, limit: number): string => {
  if (text.length <= limit) return text
  const cut = text.slice(0, limit - 1)
  const last = cut.charCodeAt(cut.length - 1)
  return `${last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut}…`
}
