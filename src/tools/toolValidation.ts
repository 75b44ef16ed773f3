import { Predicate } from "effect"
import type { Tool, ToolCategory } from "./Tool"

/** What providers accept as a function name (OpenAI's rule, the strictest of them). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

const CATEGORIES: ReadonlySet<ToolCategory> = new Set(["discord", "search", "memory", "utility", "mcp"])

/**
 * Why a tool definition cannot be registered, or undefined when it is valid.
 * Tool objects often come from outside the type system (MCP servers, plugins), so every field
 * is checked at runtime even where the types already promise it.
 */
export const invalidToolReason = (tool: Tool): string | undefined => {
  const candidate: unknown = tool
  if (!Predicate.isObject(candidate)) return "a tool must be an object"
  const { category, description, execute, isAvailableFor, isAvailableForContext, assembleForContext, name, parameters, source } =
    candidate
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    return "the name must be 1-64 characters of letters, digits, '_' or '-'"
  }
  if (typeof description !== "string" || description.trim().length === 0) return "the description is empty"
  if (typeof category !== "string" || !CATEGORIES.has(category as ToolCategory)) {
    return `the category must be one of ${[...CATEGORIES].join(", ")}`
  }
  const parametersProblem = invalidParametersReason(parameters)
  if (parametersProblem !== undefined) return parametersProblem
  if (!Predicate.isObject(source) || (source["kind"] !== "builtin" && source["kind"] !== "mcp")) {
    return "the source must be { kind: \"builtin\" } or { kind: \"mcp\", scope, server }"
  }
  if (typeof execute !== "function") return "execute is not a function"
  if (typeof isAvailableFor !== "function") return "isAvailableFor is not a function"
  if (isAvailableForContext !== undefined && typeof isAvailableForContext !== "function") {
    return "isAvailableForContext is not a function"
  }
  if (assembleForContext !== undefined && typeof assembleForContext !== "function") {
    return "assembleForContext is not a function"
  }
  return undefined
}

/** The parameters must be a JSON object schema with `properties`; `required`, when present, lists strings. */
const invalidParametersReason = (parameters: unknown): string | undefined => {
  if (!Predicate.isObject(parameters) || parameters["type"] !== "object") return "parameters must be a JSON object schema (type: \"object\")"
  if (!Predicate.isObject(parameters["properties"])) return "parameters must have a properties object"
  const required = parameters["required"]
  if (required !== undefined && !(Array.isArray(required) && required.every((entry) => typeof entry === "string"))) {
    return "parameters.required must be an array of property names"
  }
  return undefined
}
