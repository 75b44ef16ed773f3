import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect } from "effect"
import { CredentialConfig } from "../../config/CredentialConfig"
import { CREDENTIAL_SOURCES, type CredentialSource } from "../../domain/CredentialSource"
import { DAY_MS, ServerTurnAdmissionStore } from "../../store/ServerTurnAdmissionStore"
import { UsageLedgerStore, type UsageTotals } from "../../store/UsageLedgerStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

/** Days `/usage` shows (today included). */
const USAGE_DAYS = 7

const sourceLabel: Readonly<Record<CredentialSource, string>> = {
  personal: "own key",
  server: "server key",
  operator: "bot's keys"
}

const number = (value: number) => value.toLocaleString("en-US")

const summary = (rows: ReadonlyArray<UsageTotals>): string => {
  const turns = rows.reduce((sum, row) => sum + row.turns, 0)
  const tokens = rows.reduce((sum, row) => sum + row.totalTokens, 0)
  const bySource = CREDENTIAL_SOURCES.flatMap((source) => {
    const of = rows.filter((row) => row.source === source)
    return of.length === 0
      ? []
      : [`${sourceLabel[source]} ${number(of.reduce((sum, row) => sum + row.turns, 0))} / ${number(of.reduce((sum, row) => sum + row.totalTokens, 0))}`]
  })
  return `${number(turns)} turn${turns === 1 ? "" : "s"}, ${number(tokens)} tokens (${bySource.join(" · ")})`
}

/** The `/usage` answer (pure): one line per day with activity, newest first, then the total. */
export const formatUsage = (title: string, rows: ReadonlyArray<UsageTotals>, quotaLines: ReadonlyArray<string> = []): string => {
  if (rows.length === 0) return [`**${title}**`, `No turns in the last ${USAGE_DAYS} days.`, ...quotaLines].join("\n")
  const days = [...new Set(rows.map((row) => row.day))].sort((a, b) => b - a)
  return [
    `**${title}** (UTC days; turns / tokens)`,
    ...days.map((day) => `${new Date(day * DAY_MS).toISOString().slice(0, 10)}: ${summary(rows.filter((row) => row.day === day))}`),
    `Last ${USAGE_DAYS} days: ${summary(rows)}`,
    ...quotaLines
  ].join("\n")
}

/**
 * `/usage [scope:me|server]`: a user's own turns and tokens everywhere, or (Manage Server) the
 * server's, per day and credential source; with today's count against the daily quotas.
 */
export const usageCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const ledger = yield* UsageLedgerStore
    const admissions = yield* ServerTurnAdmissionStore
    const limits = yield* CredentialConfig
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not read the usage: ${error.message}` })
    const guildId = interaction.guildId ?? undefined
    const today = guildId === undefined || (limits.serverDailyTurnQuota === 0 && limits.userDailyTurnQuota === 0)
      ? undefined
      : yield* admissions.todayCounts({ guildId, userId: interaction.user.id }).pipe(Effect.mapError(failed))
    if (interaction.options.getString("scope") === "server") {
      const server = yield* requireGuild(interaction)
      yield* requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server")
      const rows = yield* ledger.totals({ guildId: server }, USAGE_DAYS).pipe(Effect.mapError(failed))
      const quota = today !== undefined && limits.serverDailyTurnQuota > 0
        ? [`Today on this server's budget: ${number(today.serverTurns)} of ${number(limits.serverDailyTurnQuota)} turns.`]
        : []
      return formatUsage("This server's usage", rows, quota)
    }
    const rows = yield* ledger.totals({ userId: interaction.user.id }, USAGE_DAYS).pipe(Effect.mapError(failed))
    const quota = today !== undefined && limits.userDailyTurnQuota > 0
      ? [`Today on this server's budget: ${number(today.userTurns)} of your ${number(limits.userDailyTurnQuota)} turns.`]
      : []
    return formatUsage("Your usage", rows, quota)
  })
