import { Effect } from "effect"
import { FakeDiscord, type FakeDiscordOptions } from "./FakeDiscord"

export { FakeDiscord, IS_VOICE_MESSAGE } from "./FakeDiscord"
export type { FakeAttachmentFile, FakeDiscordOptions, FakeInteraction, FakeOptionValue, FaultRule, RecordedRequest, UploadedFile } from "./FakeDiscord"
export { botPermissions, channelPayload, Permission } from "./payloads"
export type { FakeChannel, FakeRole, FakeUser, StoredMessage } from "./payloads"

/** A fake Discord on 127.0.0.1 for the current scope (closed when the scope ends). */
export const fakeDiscord = (options: FakeDiscordOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => FakeDiscord.start(options)),
    (fake) => Effect.promise(() => fake.close())
  )

/** Waits (live clock) until `predicate` holds on the fake; fails the test with the recent requests otherwise. */
export const waitUntil = (fake: FakeDiscord, what: string, predicate: () => boolean, timeoutMs = 5000) =>
  Effect.promise(() => fake.waitFor(predicate, timeoutMs, what))
