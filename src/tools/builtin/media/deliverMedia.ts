import { Effect, Either, Option } from "effect"
import type { MediaDelivery, OutgoingMedia } from "../../MediaOutlet"
import type { ToolContextShape } from "../../ToolContext"

/**
 * Hands a file to the turn's front. `None` when the front takes no files (the media stays in the
 * library under its id); a delivery failure is returned for the tool to report.
 */
export const deliverMedia = (
  context: ToolContextShape,
  media: OutgoingMedia
): Effect.Effect<Either.Either<Option.Option<MediaDelivery>, { readonly message: string }>> => {
  const outlet = context.turnState.mediaOutlet
  if (outlet === undefined) return Effect.succeed(Either.right(Option.none()))
  return outlet.deliver(media).pipe(
    Effect.map((delivery) => Either.right(Option.some(delivery))),
    Effect.catchAll((error) => Effect.as(Effect.logWarning(`delivering ${media.filename} failed: ${error.detail}`), Either.left({ message: error.detail })))
  )
}
