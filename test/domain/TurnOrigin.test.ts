import { assert, describe, it } from "@effect/vitest"
import { turnOriginOf } from "../../src/domain/TurnOrigin"

const persona = { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are Loopcord." }
const origin = {
  channelId: "c",
  guildId: "g",
  userId: "u",
  messageId: "m",
  isDM: false,
  locale: "en",
  persona,
  isUserImpersonation: false,
  impersonatedUserId: undefined
}

describe("turnOriginOf", () => {
  it("keeps exactly the who-and-where fields of a wider record, and no others", () => {
    const wider = { ...origin, parentChannelId: "parent", shouldSurfaceUserErrors: true, deliberate: "off", state: {} }
    assert.deepStrictEqual(turnOriginOf(wider), { ...origin, parentChannelId: "parent" })
  })

  it("leaves parentChannelId out when the turn is not in a thread", () => {
    assert.isFalse("parentChannelId" in turnOriginOf(origin))
    assert.deepStrictEqual(turnOriginOf(origin), origin)
  })
})
