import {
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  SlashCommandBuilder
} from "discord.js"
import { API_KEY_MAX_LENGTH } from "../../store/CredentialStore"
import { GUILD_CAPABILITIES } from "../../store/GuildSettingsStore"
import { serverSettingsCommands } from "./serverSettingsDefinitions"

/** The slash commands the bot registers at start-up (bulk overwrite). */

const kill = new SlashCommandBuilder()
  .setName("kill")
  .setDescription("Stop the bot's reply in this channel at once (queued replies are cancelled first)")
  .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)

const channel = new SlashCommandBuilder()
  .setName("channel")
  .setDescription("Choose whether the bot answers every message in this channel")
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageChannels)
  .addSubcommand((sub) => sub.setName("enable").setDescription("Answer every message in this channel, not only mentions and replies"))
  .addSubcommand((sub) => sub.setName("disable").setDescription("Answer only mentions and replies in this channel"))

const mcp = new SlashCommandBuilder()
  .setName("mcp")
  .setDescription("Manage this server's MCP tool servers")
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
  .addSubcommand((sub) =>
    sub
      .setName("add")
      .setDescription("Register an MCP server (Streamable HTTP or SSE)")
      .addStringOption((option) => option.setName("name").setDescription("Short name: letters, digits, _ or -").setRequired(true).setMaxLength(32))
      .addStringOption((option) => option.setName("url").setDescription("The server's http(s) URL").setRequired(true).setMaxLength(2000))
      .addStringOption((option) =>
        option
          .setName("type")
          .setDescription("What the server is for (default: generic)")
          .addChoices(
            { name: "generic", value: "generic" },
            { name: "url_fetcher (replaces fetch_url)", value: "url_fetcher" },
            { name: "web_search (replaces web_search)", value: "web_search" }
          )
      )
      .addStringOption((option) => option.setName("header").setDescription("A request header, e.g. 'Authorization: Bearer …' (stored, never shown)").setMaxLength(4000))
  )
  .addSubcommand((sub) =>
    sub
      .setName("remove")
      .setDescription("Remove an MCP server")
      .addStringOption((option) => option.setName("name").setDescription("The server's name").setRequired(true).setMaxLength(32))
  )
  .addSubcommand((sub) => sub.setName("list").setDescription("List this server's MCP servers and their state"))
  .addSubcommand((sub) =>
    sub
      .setName("enable")
      .setDescription("Enable an MCP server")
      .addStringOption((option) => option.setName("name").setDescription("The server's name").setRequired(true).setMaxLength(32))
  )
  .addSubcommand((sub) =>
    sub
      .setName("disable")
      .setDescription("Disable an MCP server (its connection is closed)")
      .addStringOption((option) => option.setName("name").setDescription("The server's name").setRequired(true).setMaxLength(32))
  )

const tools = new SlashCommandBuilder()
  .setName("tools")
  .setDescription("List the tools the model can use in this channel")
  .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)

const capabilities = new SlashCommandBuilder()
  .setName("capabilities")
  .setDescription("Show or change this server's opt-in capabilities")
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
  .addSubcommand((sub) => sub.setName("show").setDescription("Show every capability and whether it is on"))
  .addSubcommand((sub) =>
    sub
      .setName("manage")
      .setDescription("Turn a capability on or off")
      .addStringOption((option) =>
        option
          .setName("capability")
          .setDescription("Which capability")
          .setRequired(true)
          .addChoices(...GUILD_CAPABILITIES.map((name) => ({ name, value: name })))
      )
      .addBooleanOption((option) => option.setName("enabled").setDescription("On or off").setRequired(true))
  )

const imageTags = new SlashCommandBuilder()
  .setName("image-tags")
  .setDescription("Show or set this server's default image tags (generate_image)")
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
  .addSubcommand((sub) => sub.setName("show").setDescription("Show the image tags in use"))
  .addSubcommand((sub) =>
    sub
      .setName("set")
      .setDescription("Set this server's tags (replacing the bot's defaults)")
      .addStringOption((option) => option.setName("positive").setDescription("Style tags added to every prompt, e.g. 'watercolor, soft light'").setMaxLength(500))
      .addStringOption((option) => option.setName("negative").setDescription("What to avoid, e.g. 'blurry, text' (backends with a negative prompt)").setMaxLength(500))
  )
  .addSubcommand((sub) => sub.setName("clear").setDescription("Go back to the bot's default tags"))

// Every member may set their own key; the server subcommands check Manage Server themselves.
const key = new SlashCommandBuilder()
  .setName("key")
  .setDescription("Bring your own model API key, or set this server's (only you see the replies)")
  .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
  .addSubcommand((sub) =>
    sub
      .setName("personal")
      .setDescription("Use your own API key for your messages (stored encrypted, never shown)")
      .addStringOption((option) => option.setName("value").setDescription("Your API key").setRequired(true).setMaxLength(API_KEY_MAX_LENGTH))
  )
  .addSubcommand((sub) =>
    sub
      .setName("server")
      .setDescription("Set this server's API key (Manage Server; stored encrypted, never shown)")
      .addStringOption((option) => option.setName("value").setDescription("The server's API key").setRequired(true).setMaxLength(API_KEY_MAX_LENGTH))
  )
  .addSubcommand((sub) =>
    sub
      .setName("clear")
      .setDescription("Remove your personal key, or this server's key (Manage Server)")
      .addStringOption((option) =>
        option
          .setName("scope")
          .setDescription("Which key")
          .setRequired(true)
          .addChoices({ name: "personal", value: "personal" }, { name: "server", value: "server" })
      )
  )
  .addSubcommand((sub) =>
    sub
      .setName("optout")
      .setDescription("When your key fails, do not fall back to the server's key")
      .addBooleanOption((option) => option.setName("enabled").setDescription("Opt out (default) or back in"))
  )
  .addSubcommand((sub) => sub.setName("status").setDescription("Which keys are set (never their values)"))

const usage = new SlashCommandBuilder()
  .setName("usage")
  .setDescription("Turns and tokens of the last 7 days: yours, or this server's (Manage Server)")
  .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
  .addStringOption((option) =>
    option
      .setName("scope")
      .setDescription("Whose usage (default: yours)")
      .addChoices({ name: "me", value: "me" }, { name: "server", value: "server" })
  )

export const commandDefinitions: ReadonlyArray<RESTPostAPIChatInputApplicationCommandsJSONBody> = [
  kill.toJSON(),
  channel.toJSON(),
  mcp.toJSON(),
  tools.toJSON(),
  capabilities.toJSON(),
  key.toJSON(),
  usage.toJSON(),
  imageTags.toJSON(),
  ...serverSettingsCommands
]
