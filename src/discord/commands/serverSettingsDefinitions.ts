import {
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  SlashCommandBuilder,
  type SlashCommandStringOption,
  type SlashCommandSubcommandBuilder
} from "discord.js"
import { ServerLimits } from "../../store/ServerSettingsStore"

/**
 * The commands a server configures its own bot with (Manage Server; each re-checks the
 * permission when it runs). Option lengths follow the stores' bounds.
 */

const manageServer = (builder: SlashCommandBuilder) =>
  builder.setContexts(InteractionContextType.Guild).setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)

const model = manageServer(new SlashCommandBuilder().setName("model").setDescription("Choose the model this server (or one channel) runs on"))
  .addSubcommand((sub) =>
    sub
      .setName("set")
      .setDescription("Set the model chain: the primary model, then fallbacks")
      .addStringOption((option) =>
        option.setName("models").setDescription("One model, or several comma-separated (fallbacks)").setRequired(true).setMaxLength(1100).setAutocomplete(true)
      )
      .addBooleanOption((option) => option.setName("channel").setDescription("Only for this channel (default: the whole server)"))
  )
  .addSubcommand((sub) =>
    sub
      .setName("reset")
      .setDescription("Go back to the bot's default model")
      .addBooleanOption((option) => option.setName("channel").setDescription("Only this channel's choice (default: the server's and every channel's)"))
  )
  .addSubcommand((sub) => sub.setName("show").setDescription("The model used here, and the models allowed"))

const persona = manageServer(new SlashCommandBuilder().setName("persona").setDescription("This server's persona: name, avatar and prompt"))
  .addSubcommand((sub) =>
    sub
      .setName("set")
      .setDescription("Set the persona (fields left out stay as they are)")
      .addStringOption((option) => option.setName("name").setDescription("The name replies come under").setMaxLength(ServerLimits.personaName))
      .addStringOption((option) => option.setName("avatar").setDescription("An https:// image URL").setMaxLength(ServerLimits.avatarUrl))
      .addStringOption((option) => option.setName("prompt").setDescription("The system prompt").setMaxLength(ServerLimits.personaPrompt))
  )
  .addSubcommand((sub) => sub.setName("reset").setDescription("Go back to the bot's own persona"))
  .addSubcommand((sub) => sub.setName("show").setDescription("Show the persona"))

const triggers = manageServer(new SlashCommandBuilder().setName("triggers").setDescription("Which messages the bot answers in this server"))
  .addSubcommand((sub) =>
    sub
      .setName("set")
      .setDescription("Turn kinds of triggers on or off")
      .addBooleanOption((option) => option.setName("mentions").setDescription("Answer mentions of the bot"))
      .addBooleanOption((option) => option.setName("replies").setDescription("Answer replies to the bot"))
      .addBooleanOption((option) => option.setName("channels").setDescription("Answer every message of channels enabled with /channel"))
  )
  .addSubcommand((sub) => sub.setName("show").setDescription("Show the triggers"))

const accessList = (option: SlashCommandStringOption) =>
  option
    .setName("list")
    .setDescription("Which list")
    .setRequired(true)
    .addChoices(
      { name: "allowed roles (only these may use the bot)", value: "allowed_roles" },
      { name: "denied roles", value: "denied_roles" },
      { name: "denied users", value: "denied_users" }
    )

const access = manageServer(new SlashCommandBuilder().setName("access").setDescription("Who may use the bot in this server, and how often"))
  .addSubcommand((sub) =>
    sub
      .setName("add")
      .setDescription("Add a role or user to a list")
      .addStringOption(accessList)
      .addRoleOption((option) => option.setName("role").setDescription("For the role lists"))
      .addUserOption((option) => option.setName("user").setDescription("For the denied users list"))
  )
  .addSubcommand((sub) =>
    sub
      .setName("remove")
      .setDescription("Remove a role or user from a list")
      .addStringOption(accessList)
      .addRoleOption((option) => option.setName("role").setDescription("For the role lists"))
      .addUserOption((option) => option.setName("user").setDescription("For the denied users list"))
  )
  .addSubcommand((sub) =>
    sub
      .setName("rate")
      .setDescription("Messages per minute one member may trigger (0: no limit)")
      .addIntegerOption((option) =>
        option.setName("messages_per_minute").setDescription("0 to 120").setRequired(true).setMinValue(0).setMaxValue(ServerLimits.messagesPerMinute)
      )
  )
  .addSubcommand((sub) => sub.setName("show").setDescription("Show the lists and the rate"))

const approvalTarget = (sub: SlashCommandSubcommandBuilder) =>
  sub
    .addStringOption((option) => option.setName("tool").setDescription("A tool by name").setMaxLength(ServerLimits.toolName).setAutocomplete(true))
    .addStringOption((option) => option.setName("mcp_server").setDescription("Every tool of one of this server's MCP servers").setMaxLength(32).setAutocomplete(true))

const approvals = manageServer(new SlashCommandBuilder().setName("approvals").setDescription("Tools that wait for Approve / Deny before they run"))
  .addSubcommand((sub) => approvalTarget(sub.setName("add").setDescription("A tool, or every tool of an MCP server, waits for approval")))
  .addSubcommand((sub) => approvalTarget(sub.setName("remove").setDescription("Run it without approval again")))
  .addSubcommand((sub) => sub.setName("list").setDescription("What waits for approval"))

const settings = manageServer(new SlashCommandBuilder().setName("settings").setDescription("Everything this server set for the bot, in one view"))

export const serverSettingsCommands: ReadonlyArray<RESTPostAPIChatInputApplicationCommandsJSONBody> = [
  model.toJSON(),
  persona.toJSON(),
  triggers.toJSON(),
  access.toJSON(),
  approvals.toJSON(),
  settings.toJSON()
]
