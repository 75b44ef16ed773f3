/** A JSON Schema object describing tool parameters, as sent to providers. */
export interface JsonSchemaObject {
  readonly type: "object"
  readonly properties: Readonly<Record<string, unknown>>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** What a provider is told about one tool for this turn. */
export interface ToolDeclaration {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchemaObject
}
