import { Context, Data, Effect } from "effect"

/** Why a server-paid turn was not admitted (checked in this order: cooldown, then the quotas). */
export type AdmissionRefusal = "cooldown" | "server_quota" | "user_quota"

/** Who asks to spend the server's key: the user, in a server (`undefined`: a DM). */
export interface AdmissionRequest {
  readonly guildId: string | undefined
  readonly userId: string
}

/**
 * The answer of admission. `Admitted` reserves one unit of every quota and starts the cooldown;
 * `settle` commits the reservation when the turn produced something, or releases it (the unit and
 * the cooldown) when the turn failed altogether. Settled exactly once.
 */
export type Admission = Data.TaggedEnum<{
  Admitted: { readonly settle: (outcome: "commit" | "release") => Effect.Effect<void> }
  Refused: { readonly reason: AdmissionRefusal; readonly retryAfterMs: number | undefined }
}>
export const Admission = Data.taggedEnum<Admission>()

export interface ServerAdmissionShape {
  /** Atomic across processes: two turns never both take the last unit. Never fails (an unavailable store is the implementation's call). */
  readonly admit: (request: AdmissionRequest) => Effect.Effect<Admission>
}

/** Without a store every server-paid turn is admitted (the terminal, tests of other modules). */
const unlimited: ServerAdmissionShape = {
  admit: () => Effect.succeed(Admission.Admitted({ settle: () => Effect.void }))
}

/**
 * Admission of server-paid turns: the server message
 * cooldown first, then the server and user daily quotas. The store implements it.
 */
export const ServerAdmission = Context.Reference<ServerAdmissionShape>("loopcord/loop/ServerAdmission", {
  defaultValue: () => unlimited
})
