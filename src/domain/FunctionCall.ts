/** Arguments of a tool call as the model wrote them (a JSON object). */
export type ToolArgs = Readonly<Record<string, unknown>>

/**
 * One tool call requested by the model, provider-agnostic.
 * `argumentsTruncated` is set only when the provider cut the argument payload and structural
 * repair recovered a subset: such a call is never dispatched.
 */
export interface FunctionCall {
  readonly name: string
  readonly args?: ToolArgs | undefined
  readonly argumentsTruncated?: boolean
  /** Provider-issued call id (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`); replayed as-is. */
  readonly id?: string
  /** Gemini-family opaque signature that must be replayed with the call. */
  readonly thoughtSignature?: string
  /** OpenRouter reasoning blocks that must be replayed with the call. */
  readonly reasoningDetails?: ReadonlyArray<unknown>
  /** DeepSeek thinking-mode reasoning that must be replayed with the call. */
  readonly reasoningContent?: string
}

export const FunctionCall = (call: FunctionCall): FunctionCall => ({ ...call })
