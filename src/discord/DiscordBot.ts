import { type AutocompleteInteraction, type ChatInputCommandInteraction, Events, type Interaction, type Message } from "discord.js"
import { type Cause, Effect, FiberSet, Layer, Option } from "effect"
import { ChannelQueue } from "../chat/ChannelQueue"
import { CredentialConfig } from "../config/CredentialConfig"
import { DiscordConfig } from "../config/DiscordConfig"
import { ModelChoiceConfig } from "../config/ModelChoiceConfig"
import { ServerSettingsConfig } from "../config/ServerSettingsConfig"
import { RoutePlan } from "../loop/RoutePlan"
import { ThoughtLog } from "../loop/ThoughtLog"
import { GuildMcpAdmin } from "../mcp/GuildMcpAdmin"
import { GuildMcpRegistry } from "../mcp/GuildMcpRegistry"
import { LanguageModel } from "../provider/LanguageModel"
import { CredentialStore } from "../store/CredentialStore"
import { EnabledChannelStore } from "../store/EnabledChannelStore"
import { GuildImageTagsStore } from "../store/GuildImageTagsStore"
import { GuildSettingsStore } from "../store/GuildSettingsStore"
import { PersonaBlockStore } from "../store/PersonaBlockStore"
import { ServerSettingsStore } from "../store/ServerSettingsStore"
import { ServerTurnAdmissionStore } from "../store/ServerTurnAdmissionStore"
import { UsageLedgerStore } from "../store/UsageLedgerStore"
import { DeliberateToolPlanner } from "../tools/deliberate/DeliberateToolPlanner"
import { ToolRegistry } from "../tools/ToolRegistry"
import { accessCommand } from "./commands/accessCommand"
import { approvalsAutocomplete, approvalsCommand } from "./commands/approvalsCommand"
import { capabilitiesCommand } from "./commands/capabilitiesCommand"
import { channelCommand } from "./commands/channelCommand"
import { imageTagsCommand } from "./commands/imageTagsCommand"
import { replyPrivately, replyPrivatelyWithEmbed } from "./commands/commandReply"
import { commandDefinitions } from "./commands/definitions"
import { keyCommand } from "./commands/keyCommand"
import { killCommand } from "./commands/killCommand"
import { mcpCommand } from "./commands/mcpCommand"
import { modelAutocomplete, modelCommand } from "./commands/modelCommand"
import { personaCommand } from "./commands/personaCommand"
import { settingsCommand } from "./commands/settingsCommand"
import { toolsCommand } from "./commands/toolsCommand"
import { triggersCommand } from "./commands/triggersCommand"
import { usageCommand } from "./commands/usageCommand"
import { DiscordBlockTargetResolver } from "./DiscordBlockTargetResolver"
import { DiscordClient } from "./DiscordClient"
import { DiscordMessageImages } from "./DiscordMessageImages"
import { DiscordThoughtLog } from "./DiscordThoughtLog"
import { contextWithBlocks, type DiscordFrontOptions, type DiscordTurnDeps, discordTurnInput } from "./DiscordTurnInput"
import { GuildStickerCatalog } from "./GuildStickerCatalog"
import { HistoryCoverage } from "./HistoryCoverage"
import { PersonaWebhooks } from "./PersonaWebhooks"
import { RateLimitGauge } from "./RateLimitGauge"
import { reasoningAfterReply } from "./reasoningDisplay"
import { makeServerGate } from "./ServerGate"
import { UserRateLimiter } from "./UserRateLimiter"
import { RequestBudget } from "./RequestBudget"
import { type TriggerFacts, triggerReason } from "./triggers"
import { thrownMessage } from "../domain/thrownMessage"

/** What the slash commands use besides the queue. */
type CommandServices =
  | EnabledChannelStore
  | GuildSettingsStore
  | GuildImageTagsStore
  | GuildMcpAdmin
  | ToolRegistry
  | CredentialStore
  | UsageLedgerStore
  | ServerTurnAdmissionStore
  | CredentialConfig
  | ServerSettingsStore
  | ModelChoiceConfig
  | GuildMcpRegistry

const logFailure = (what: string) => (cause: Cause.Cause<unknown>) => Effect.logError(`Discord: ${what} failed`, cause)

/**
 * The Discord front: answers mentions, DMs, replies to the bot and every message of enabled
 * channels through the ChannelQueue (a message arriving while a reply streams interrupts it
 * and is answered next; inside a tool chain it waits), and serves the slash commands. Every
 * event runs in its own fiber of this layer's scope and ends in `logError`, so one bad event
 * never stops the bot.
 */
const make = (options: DiscordFrontOptions) =>
  Effect.gen(function*() {
    const client = yield* DiscordClient
    const config = yield* DiscordConfig
    const queue = yield* ChannelQueue
    const webhooks = yield* PersonaWebhooks
    const gauge = yield* RateLimitGauge
    const enabledChannels = yield* EnabledChannelStore
    const blocks = yield* PersonaBlockStore
    const planner = yield* DeliberateToolPlanner
    const { allowDms, replyChainMax } = yield* ServerSettingsConfig
    const commandServices = yield* Effect.context<CommandServices>()
    const route = { provider: (yield* LanguageModel).name, model: (yield* RoutePlan).models[0] ?? "(no model configured)" }

    const persona = config.persona
    const deps: DiscordTurnDeps = {
      client,
      webhooks,
      gauge,
      budget: yield* RequestBudget,
      coverage: yield* HistoryCoverage,
      persona,
      useWebhooks: config.personaWebhooks,
      maxMessagesPerTurn: config.maxMessagesPerTurn,
      replyChainMax,
      options,
      contextFor: (trigger, entries) => contextWithBlocks(blocks, persona, trigger.guildId ?? undefined, entries),
      afterReply: reasoningAfterReply(yield* GuildSettingsStore, yield* ThoughtLog)
    }
    const gate = yield* makeServerGate({
      persona,
      personaWebhooks: config.personaWebhooks,
      ...(options.rateNoticeLifetime === undefined ? {} : { rateNoticeLifetime: options.rateNoticeLifetime })
    })

    const isEnabledChannel = (message: Message<true>) =>
      Effect.gen(function*() {
        if (yield* enabledChannels.isEnabled(message.guildId, message.channelId)) return true
        const parentId = message.channel.isThread() ? message.channel.parentId : null
        return parentId === null ? false : yield* enabledChannels.isEnabled(message.guildId, parentId)
      }).pipe(Effect.catch((error) => Effect.as(Effect.logWarning(`enabled-channel lookup failed: ${error.message}`), false)))

    const isMuted = (message: Message<true>) =>
      blocks.activeBlock(message.guildId, persona.id, message.author.id).pipe(
        Effect.map(Option.isSome),
        Effect.catch((error) => Effect.as(Effect.logWarning(`block lookup failed: ${error.message}`), false))
      )

    const repliesToBot = (message: Message) =>
      Effect.gen(function*() {
        if (message.reference?.messageId === undefined) return false
        if (message.mentions.repliedUser?.id === client.user.id) return true
        const referenced = message.channel.messages.cache.get(message.reference.messageId)
        const webhookId = referenced?.webhookId ?? null
        if (webhookId === null || !message.channel.isSendable()) return false
        if ((yield* webhooks.knownOwnIds).has(webhookId)) return true
        // Asking Discord for the channel's webhook is only worth it where personas post through one.
        const personaHere = deps.useWebhooks || (message.guildId !== null && (yield* gate.usesPersona(message.guildId)))
        return personaHere ? yield* webhooks.isOwnWebhook(message.channel, webhookId) : false
      })

    /** The facts of triggerReason; the stores are asked only when the cheaper facts leave it open. */
    const triggerFacts = (message: Message) =>
      Effect.gen(function*(): Effect.fn.Return<TriggerFacts> {
        const fromBotOrWebhook = message.author.bot || message.webhookId !== null
        const ignored = fromBotOrWebhook || message.system
        const inGuild = message.inGuild()
        const mentionsBot = message.mentions.users.has(client.user.id) ||
          message.mentions.roles.some((role) => role.tags?.botId === client.user.id)
        const replied = !ignored && inGuild && !mentionsBot ? yield* repliesToBot(message) : false
        const enabled = !ignored && inGuild && !mentionsBot && !replied ? yield* isEnabledChannel(message) : false
        const muted = !ignored && inGuild && (mentionsBot || replied || enabled) ? yield* isMuted(message) : false
        return {
          fromBotOrWebhook,
          isSystem: message.system,
          isDM: !inGuild,
          mentionsBot,
          repliesToBot: replied,
          channelEnabled: enabled,
          authorMuted: muted
        }
      })

    const onMessage = (message: Message) =>
      Effect.gen(function*() {
        const reason = triggerReason(yield* triggerFacts(message))
        if (Option.isNone(reason)) return
        if (reason.value === "dm" && !allowDms) return
        const channel = message.channel
        if (!channel.isSendable()) return
        yield* Effect.logDebug(`trigger: ${reason.value}`).pipe(Effect.annotateLogs({ channelId: message.channelId, messageId: message.id }))
        // The server's triggers, access lists and rate, before anything is queued.
        const admitted = yield* gate.admit(message, reason.value)
        if (Option.isNone(admitted)) return
        const { models, persona: turnPersona, useWebhooks } = admitted.value
        const deliberate = yield* planner.plan({ guildId: message.guildId ?? undefined, channelId: message.channelId, messageText: message.content })
        const input = discordTurnInput({ ...deps, persona: turnPersona, useWebhooks }, message, channel, deliberate)
        yield* queue.submit(models === undefined ? input : { ...input, models })
      })

    const onCommand = (interaction: ChatInputCommandInteraction): Effect.Effect<void, unknown, CommandServices> => {
      switch (interaction.commandName) {
        case "kill":
          return killCommand(interaction, queue)
        case "channel":
          return replyPrivately(interaction, channelCommand(interaction))
        case "capabilities":
          return replyPrivately(interaction, capabilitiesCommand(interaction))
        case "image-tags":
          return replyPrivately(interaction, imageTagsCommand(interaction))
        case "mcp":
          return replyPrivately(interaction, mcpCommand(interaction))
        case "tools":
          return replyPrivately(interaction, Effect.flatMap(
            interaction.guildId === null ? Effect.succeed(undefined) : gate.chosenModel(interaction.guildId, interaction.channelId),
            (model) => toolsCommand(interaction, model === undefined ? route : { ...route, model })
          ))
        case "key":
          return replyPrivately(interaction, keyCommand(interaction))
        case "usage":
          return replyPrivately(interaction, usageCommand(interaction))
        case "model":
          return replyPrivately(interaction, modelCommand(interaction))
        case "persona":
          return replyPrivately(interaction, personaCommand(interaction, persona.name))
        case "triggers":
          return replyPrivately(interaction, triggersCommand(interaction))
        case "access":
          return replyPrivately(interaction, accessCommand(interaction))
        case "approvals":
          return replyPrivately(interaction, approvalsCommand(interaction))
        case "settings":
          return replyPrivatelyWithEmbed(interaction, settingsCommand(interaction, persona.name))
        default:
          return replyPrivately(interaction, Effect.succeed(`Unknown command /${interaction.commandName}.`))
      }
    }

    const onAutocomplete = (interaction: AutocompleteInteraction): Effect.Effect<void, unknown, CommandServices> => {
      switch (interaction.commandName) {
        case "model":
          return modelAutocomplete(interaction)
        case "approvals":
          return approvalsAutocomplete(interaction)
        default:
          return Effect.tryPromise(() => interaction.respond([]))
      }
    }

    const onInteraction = (interaction: Interaction) =>
      interaction.isChatInputCommand()
        ? Effect.provide(onCommand(interaction), commandServices)
        : interaction.isAutocomplete()
        ? Effect.provide(onAutocomplete(interaction), commandServices)
        : Effect.void

    // Handlers run in fibers of this scope: interrupted when the bot stops, never run with runPromise.
    const run = yield* FiberSet.makeRuntime<never>()
    const messageListener = (message: Message) => {
      run(onMessage(message).pipe(Effect.catchCause(logFailure("handling a message"))))
    }
    const interactionListener = (interaction: Interaction) => {
      run(onInteraction(interaction).pipe(Effect.catchCause(logFailure("handling an interaction"))))
    }
    client.on(Events.MessageCreate, messageListener)
    client.on(Events.InteractionCreate, interactionListener)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        client.off(Events.MessageCreate, messageListener)
        client.off(Events.InteractionCreate, interactionListener)
      })
    )

    // One process registers (bulk overwrite): with shards, the one that runs shard 0.
    const registers = client.shard === null || client.shard.ids.includes(0)
    const guildId = config.commandGuildId
    if (registers) yield* Effect.tryPromise(() =>
      guildId === undefined ? client.application.commands.set([...commandDefinitions]) : client.application.commands.set([...commandDefinitions], guildId)
    ).pipe(
      Effect.tap((registered) => Effect.logInfo(`Discord: registered ${registered.size} slash commands${config.commandGuildId === undefined ? " (global)" : ` in guild ${config.commandGuildId}`}`)),
      Effect.catch((error) =>
        Effect.logWarning(`Discord: could not register slash commands (was the bot invited with the applications.commands scope?): ${thrownMessage(error)}`)
      )
    )
    yield* Effect.logInfo(`Discord: answering as ${persona.name}${deps.useWebhooks ? " (persona webhooks)" : ""}`)
  })

/**
 * The services the rest of the app takes from Discord: the logged-in client, the thought-log
 * channel, the guild sticker catalog, the block-target resolver (guild members), persona
 * webhooks and the rate-limit gauge. Build it once
 * and share it between the turn services and `DiscordBot.layer`.
 */
export const discordServicesWith = <E, R>(client: Layer.Layer<DiscordClient | RequestBudget | HistoryCoverage, E, R>) =>
  Layer.mergeAll(
    DiscordThoughtLog,
    GuildStickerCatalog,
    DiscordBlockTargetResolver,
    DiscordMessageImages,
    PersonaWebhooks.Default,
    RateLimitGauge.Default
  ).pipe(Layer.provideMerge(client))

/** The services over the client with the budget DISCORD_GLOBAL_REQUESTS_PER_SECOND sets (benchmarks swap the client). */
export const DiscordServices = discordServicesWith(DiscordClient.layer)

export const DiscordBot = {
  /** The Discord front with default timings (what `main` launches when DISCORD_TOKEN is set). */
  layer: Layer.effectDiscard(make({})).pipe(Layer.provide(UserRateLimiter.Default)),
  /** The front with other timings (tests). */
  layerWith: (options: DiscordFrontOptions) => Layer.effectDiscard(make(options)).pipe(Layer.provide(UserRateLimiter.Default))
} as const
