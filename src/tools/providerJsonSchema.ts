import { type Schema, SchemaRepresentation } from "effect"

type Json = { readonly [key: string]: unknown }

const isJsonObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The JSON Schema of what a schema decodes from, in the plain form providers are sent: a number is
 * `{ type: "number" }`, an optional property is its value's schema (never "or null"), objects list
 * their properties and refuse others (`additionalProperties: false`), and named definitions sit
 * under `$defs` on the root, where `$ref`s point. The schema library describes the JSON codec of a
 * schema instead (non-finite numbers as strings, `undefined` as `null`), which providers would
 * read as parameters the tools do not take.
 */
export const providerJsonSchema = (schema: Schema.Top): Json => {
  const document = SchemaRepresentation.toJsonSchemaDocument(SchemaRepresentation.toRepresentation(schema.ast), {
    onExcessProperty: "error"
  })
  const root = normalize(document.schema)
  const definitions = Object.entries(document.definitions)
  return definitions.length === 0
    ? root
    : { ...root, $defs: Object.fromEntries(definitions.map(([name, definition]) => [name, normalize(definition)])) }
}

const NON_FINITE = new Set(["NaN", "Infinity", "-Infinity"])

/** The branch a schema adds beside `number` for NaN and the infinities. */
const isNonFiniteBranch = (branch: unknown): boolean =>
  isJsonObject(branch) &&
  branch["type"] === "string" &&
  Array.isArray(branch["enum"]) &&
  branch["enum"].length === NON_FINITE.size &&
  branch["enum"].every((value) => NON_FINITE.has(value as string))

const isNullBranch = (branch: unknown): boolean =>
  isJsonObject(branch) && branch["type"] === "null" && Object.keys(branch).length === 1

const normalize = (node: unknown): Json => {
  if (!isJsonObject(node)) return {}
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" && isJsonObject(value)) {
      const required = new Set(Array.isArray(node["required"]) ? (node["required"] as ReadonlyArray<string>) : [])
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, normalize(required.has(name) ? property : withoutNull(property))])
      )
    } else if ((key === "items" || key === "additionalProperties" || key === "not") && isJsonObject(value)) {
      out[key] = normalize(value)
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf" || key === "prefixItems") && Array.isArray(value)) {
      out[key] = value.map(normalize)
    } else if ((key === "patternProperties" || key === "$defs") && isJsonObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, normalize(entry)]))
    } else {
      out[key] = value
    }
  }
  return collapse(out)
}

/** An optional property's `null` alternative stands for `undefined`, which JSON cannot send. */
const withoutNull = (property: unknown): unknown => {
  if (!isJsonObject(property) || !Array.isArray(property["anyOf"])) return property
  const branches = property["anyOf"].filter((branch) => !isNullBranch(branch))
  return branches.length === property["anyOf"].length ? property : { ...property, anyOf: branches }
}

/** `number` without its non-finite alternative, and a one-branch `anyOf` merged into its node. */
const collapse = (node: Record<string, unknown>): Json => {
  const anyOf = node["anyOf"]
  if (!Array.isArray(anyOf)) return node
  const branches = anyOf.filter((branch, _, all) => !(isNonFiniteBranch(branch) && all.some((other) => isJsonObject(other) && other["type"] === "number")))
  const { anyOf: _anyOf, ...rest } = node
  if (branches.length === 1 && isJsonObject(branches[0]) && Object.keys(branches[0]).every((key) => !(key in rest))) {
    return { ...branches[0], ...rest }
  }
  return branches.length === anyOf.length ? node : { ...rest, anyOf: branches }
}
