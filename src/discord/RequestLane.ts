/**
 * Why a REST request is made, which decides who goes first when the request budget is short:
 * - `final`: the text a pass ends with (the turn waits on it);
 * - `first`: a turn's first message (the user sees the bot answering);
 * - `control`: anything not classified (webhook lookup, stickers, media, command registration);
 * - `edit`: an intermediate edit of a streaming reply (coalesced: the newest text goes when it may);
 * - `background`: typing indicators and history reads (they yield to replies).
 */
export type RequestLane = "final" | "first" | "control" | "edit" | "background"

/** Lanes in the order they are served. */
export const LANES: ReadonlyArray<RequestLane> = ["final", "first", "control", "edit", "background"]

export const laneRank = (lane: RequestLane): number => LANES.indexOf(lane)

/** Lanes that carry reply text: typing and other background work yields while any of these wait. */
export const isReplyLane = (lane: RequestLane): boolean => lane === "final" || lane === "first" || lane === "edit"

/**
 * Requests Discord does not count toward a bot's global limit: interaction callbacks and the
 * interaction webhooks (follow-ups, edits of the original response), which use the
 * application's id where a webhook id would be. They bypass the budget, so a slash command is
 * answered within its 3 seconds whatever the replies are doing.
 */
export const isExemptFromGlobalLimit = (path: string, applicationId: string | undefined): boolean =>
  /^\/interactions\/\d+\/[^/]+\/callback/.test(path) ||
  (applicationId !== undefined && path.startsWith(`/webhooks/${applicationId}/`))

/** The lane of a request nobody named one for: typing and message reads are background work. */
export const laneOfRoute = (method: string, path: string): RequestLane => {
  const upper = method.toUpperCase()
  if (upper === "POST" && /^\/channels\/\d+\/typing$/.test(path)) return "background"
  if (upper === "GET" && /^\/channels\/\d+\/messages(?:\?|$)/.test(path)) return "background"
  return "control"
}
