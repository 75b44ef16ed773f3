import { Data } from "effect"
import type { ToolFailureClass } from "../domain/ToolFailureClass"

type UrlPolicyErrorCode =
  | "INVALID_FORMAT"
  | "INVALID_PROTOCOL"
  | "CREDENTIALS_IN_URL"
  | "DNS_RESOLUTION_FAILED"
  | "PRIVATE_NETWORK_BLOCKED"

const PRIVATE_NETWORK_OPT_IN = "FETCH_URL_ALLOW_PRIVATE_NETWORK=true"

/**
 * An outbound URL was refused by the address policy. The message is for operators
 * (the logs, the thought log, an admin's command): it names the host, the offending address,
 * the reason, and, for a private-network refusal, the opt-in that would allow it. The model
 * only ever reads `failureClass`.
 */
export class UrlPolicyError extends Data.TaggedError("UrlPolicyError")<{
  readonly code: UrlPolicyErrorCode
  /** Normalized host ("" when the URL could not be parsed). */
  readonly host: string
  /** The address that was refused (PRIVATE_NETWORK_BLOCKED). */
  readonly address?: string
  readonly reason: string
  /** Every address the host resolved to, when resolution happened. */
  readonly addresses?: ReadonlyArray<string>
  /** True when nothing relaxes the refusal (metadata / link-local floor, unreadable answers). */
  readonly alwaysBlocked?: boolean
  /** The setting that would allow a private-network address (fetch_url's unless the policy says otherwise). */
  readonly optIn?: string
}> {
  /** The kind of refusal, which is all the model may read of it. */
  get failureClass(): ToolFailureClass {
    switch (this.code) {
      case "INVALID_FORMAT":
        return "invalid_url"
      case "INVALID_PROTOCOL":
        return "blocked_protocol"
      case "CREDENTIALS_IN_URL":
        return "blocked_credentials"
      case "DNS_RESOLUTION_FAILED":
        return "unreachable"
      case "PRIVATE_NETWORK_BLOCKED":
        return this.alwaysBlocked === true ? "blocked_always" : "blocked_private"
    }
  }

  override get message(): string {
    switch (this.code) {
      case "INVALID_FORMAT":
        return `Invalid URL: ${this.reason}`
      case "INVALID_PROTOCOL":
        return `Unsupported URL protocol for ${this.host || "the URL"}: ${this.reason} (only http and https are fetched)`
      case "CREDENTIALS_IN_URL":
        return `Refusing ${this.host}: URLs with embedded credentials (user:password@) are not fetched`
      case "DNS_RESOLUTION_FAILED":
        return `Could not resolve ${this.host}: ${this.reason}`
      case "PRIVATE_NETWORK_BLOCKED": {
        const resolved =
          this.addresses !== undefined && this.addresses.length > 0 && !(this.addresses.length === 1 && this.addresses[0] === this.host)
            ? ` (resolved addresses: ${this.addresses.join(", ")})`
            : ""
        const head = `Refusing to fetch ${this.host}: address ${this.address ?? "?"} is ${this.reason}${resolved}.`
        const optIn = this.optIn ?? PRIVATE_NETWORK_OPT_IN
        if (this.alwaysBlocked === true) return `${head} Such addresses are never fetched, not even with ${optIn}.`
        return optIn === PRIVATE_NETWORK_OPT_IN
          ? `${head} Private, loopback and reserved addresses are blocked in production; an administrator can allow them with ${optIn}.`
          : `${head} Private, loopback and reserved addresses are refused in every environment; the operator can allow them with ${optIn}.`
      }
    }
  }
}
