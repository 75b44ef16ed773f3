import { Effect, Ref } from "effect"
import type { ResponseSink } from "./ResponseSink"

/**
 * A pass whose text must not be posted again (a pass policy withholds it, NovelAI's `suppressTextOutput`):
 * the model retries a failed tool and repeats the narration it already posted. The wrapped sink
 * shows nothing of the pass (`endPass` delivers "", which is the truth); what the model wrote is
 * kept in `withheld` so the loop still knows the pass had pre-tool text. Notices pass through.
 */
interface QuietSink {
  readonly sink: ResponseSink["Service"]
  readonly withheld: Effect.Effect<string>
}

export const makeQuietSink = (sink: ResponseSink["Service"]): Effect.Effect<QuietSink> =>
  Effect.map(Ref.make(""), (withheld) => ({
    sink: {
      write: (delta) => Ref.update(withheld, (text) => text + delta),
      endPass: () => Effect.succeed(""),
      delivered: sink.delivered,
      ...(sink.capacity === undefined ? {} : { capacity: sink.capacity }),
      notice: sink.notice,
      ...(sink.toolActivity === undefined ? {} : { toolActivity: sink.toolActivity })
    },
    withheld: Ref.get(withheld)
  }))
