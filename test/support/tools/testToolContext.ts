import { Deferred, Effect, Ref } from "effect"
import type { ToolContextShape } from "../../../src/tools/ToolContext"
import { makeTurnState } from "../../../src/tools/TurnState"

export interface TestToolContext {
  readonly context: ToolContextShape
  readonly progress: Ref.Ref<ReadonlyArray<string>>
  readonly controller: AbortController
}

/**
 * A ToolContext for calling a tool directly (guild-1, channel-1): progress notices are recorded,
 * `controller.abort()` fires `abortSignal`.
 */
export const testToolContext = (overrides: Partial<ToolContextShape> = {}): Effect.Effect<TestToolContext> =>
  Effect.gen(function*() {
    const progress = yield* Ref.make<ReadonlyArray<string>>([])
    const killed = yield* Deferred.make<void>()
    const controller = new AbortController()
    const context: ToolContextShape = {
      channelId: "channel-1",
      guildId: "guild-1",
      userId: "user-1",
      messageId: "message-1",
      isDM: false,
      provider: "openai-compatible",
      model: "test-model",
      locale: "en",
      persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are Loopcord." },
      isUserImpersonation: false,
      impersonatedUserId: undefined,
      suppressProgressNotices: false,
      showKillHint: false,
      iteration: 0,
      turnState: yield* makeTurnState(),
      abortSignal: controller.signal,
      killed: Deferred.await(killed),
      progress: (text) => Ref.update(progress, (all) => [...all, text]),
      ...overrides
    }
    return { context, progress, controller }
  })
