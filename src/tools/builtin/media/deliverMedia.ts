import { Effect, Result, Option } from "effect"
import type { MediaDelivery, OutgoingMedia } from "../../MediaOutlet"
import type { ToolContextShape } from "../../ToolContext"

/**
 * Hands a file to the turn's front. `None` when the front takes no files (the media stays in the
 * library under its id); a delivery failure is returned for the tool to report.
 */
export const deliverMedia = (
  context: ToolContextShape,
  media: OutgoingMedia
): Effect.Effect<Result.Result<Option.Option<MediaDelivery>, { readonly message: string }>> => {
  const outlet = context.turnState.mediaOutlet
  if (outlet === undefined) return Effect.succeed(Result.succeed(Option.none()))
  return outlet.deliver(media).pipe(
    Effect.map((delivery) => Result.succeed(Option.some(delivery))),
    Effect.catch((error) => Effect.as(Effect.logWarning(`delivering ${media.filename} failed: ${error.detail}`), Result.fail({ message: error.detail })))
  )
}
