import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { type TriggerFacts, triggerReason } from "../../src/discord/triggers"

const quiet: TriggerFacts = {
  fromBotOrWebhook: false,
  isSystem: false,
  isDM: false,
  mentionsBot: false,
  repliesToBot: false,
  channelEnabled: false,
  authorMuted: false
}

describe("triggerReason", () => {
  it("answers a DM, a mention, a reply to the bot and any message of an enabled channel", () => {
    assert.deepStrictEqual(triggerReason({ ...quiet, isDM: true }), Option.some("dm"))
    assert.deepStrictEqual(triggerReason({ ...quiet, mentionsBot: true }), Option.some("mention"))
    assert.deepStrictEqual(triggerReason({ ...quiet, repliesToBot: true }), Option.some("reply"))
    assert.deepStrictEqual(triggerReason({ ...quiet, channelEnabled: true }), Option.some("enabled_channel"))
    assert.deepStrictEqual(triggerReason(quiet), Option.none())
  })

  it("never answers bots, webhooks, system messages or muted users, whatever else holds", () => {
    const everything = { ...quiet, isDM: true, mentionsBot: true, repliesToBot: true, channelEnabled: true }
    assert.deepStrictEqual(triggerReason({ ...everything, fromBotOrWebhook: true }), Option.none())
    assert.deepStrictEqual(triggerReason({ ...everything, isSystem: true }), Option.none())
    assert.deepStrictEqual(triggerReason({ ...everything, authorMuted: true }), Option.none())
  })
})
