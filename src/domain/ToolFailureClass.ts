/**
 * What the model reads about a failed tool: the kind of failure, never its details. The model
 * repeats what it reads to users, so an address, a resolved IP, an internal host name or a
 * vendor's error text never goes into these words; the details go to the logs and the thought
 * log (`ToolResult.detail`).
 */
export type ToolFailureClass =
  /** A private, loopback or reserved address (an operator setting may allow it). */
  | "blocked_private"
  /** Metadata, link-local or unreadable addresses: never reached, whatever the settings. */
  | "blocked_always"
  | "blocked_protocol"
  | "blocked_credentials"
  | "invalid_url"
  | "unreachable"
  | "timed_out"
  | "cancelled"
  | "too_large"
  | "too_many_redirects"
  | "bad_redirect"
  /** A backend (image, voice, vision, search, MCP) answered with an unreadable or wrong answer. */
  | "bad_answer"
  | "internal_error"

export const toolFailureClassText: Record<ToolFailureClass, string> = {
  blocked_private: "blocked: a private address",
  blocked_always: "blocked: an address that is never reached",
  blocked_protocol: "blocked: only http and https URLs are fetched",
  blocked_credentials: "blocked: URLs with embedded credentials are not fetched",
  invalid_url: "not a valid absolute URL",
  unreachable: "unreachable",
  timed_out: "timed out",
  cancelled: "cancelled",
  too_large: "too large",
  too_many_redirects: "too many redirects",
  bad_redirect: "a broken redirect",
  bad_answer: "an unreadable answer",
  internal_error: "an internal error"
}

/** An HTTP status as a class: the number says enough, the body (vendor text) is never shown. */
export const httpStatusClass = (status: number): string =>
  status >= 500 ? `failed (${Math.floor(status / 100)}xx)` : `refused the request (HTTP ${status})`

/** A backend service's failure, e.g. "the image service failed (5xx)", "the voice service is unreachable". */
export const serviceFailureText = (service: string, failure: ToolFailureClass | { readonly status: number }): string => {
  if (typeof failure === "object") return `the ${service} service ${httpStatusClass(failure.status)}`
  switch (failure) {
    case "unreachable":
      return `the ${service} service is unreachable`
    case "timed_out":
      return `the ${service} service timed out`
    case "bad_answer":
      return `the ${service} service gave an unreadable answer`
    case "too_large":
      return `the ${service} service's answer was too large`
    default:
      return `the ${service} service failed: ${toolFailureClassText[failure]}`
  }
}
