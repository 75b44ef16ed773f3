// The idle floor of the Discord front in startup.bench.ts: a bare discord.js Client with the
// bot's intents, logged into the fake Discord, doing nothing. Prints READY when ready.
//
//   DISCORD_TOKEN=… DISCORD_API_BASE_URL=… node discordClientIdle.mjs
import { Client, GatewayIntentBits, Partials } from "discord.js"

const client = new Client({
  intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
  partials: [Partials.Channel],
  rest: { api: process.env.DISCORD_API_BASE_URL }
})
client.once("ready", () => process.stdout.write("READY\n"))
// With --expose-gc, SIGUSR2 runs a full collection (the scale bench measures idle memory after one).
process.on("SIGUSR2", () => globalThis.gc?.())
process.on("SIGTERM", () => {
  void client.destroy().then(() => process.exit(0))
})
await client.login(process.env.DISCORD_TOKEN)
