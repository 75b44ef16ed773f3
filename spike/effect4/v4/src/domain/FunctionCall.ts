/** Arguments of a tool call as the model wrote them (a JSON object). */
export type ToolArgs = Readonly<Record<string, unknown>>

/** One tool call requested by the model, provider-agnostic. */
export interface FunctionCall {
  readonly name: string
  readonly args?: ToolArgs | undefined
  readonly argumentsTruncated?: boolean
  readonly id?: string
  readonly thoughtSignature?: string
  readonly reasoningDetails?: ReadonlyArray<unknown>
  readonly reasoningContent?: string
}

// Data.case (v3) copied the fields onto a structural prototype; v4 compares plain objects structurally.
export const FunctionCall = (call: FunctionCall): FunctionCall => ({ ...call })
