import { SchemaAST, type SchemaIssue } from "effect"

/**
 * Why a tool's arguments did not decode, as the model reads it: a tree with the expected shape at
 * the root, one branch per failing property (`["url"]`) and the reason as the leaf ("is missing",
 * "Expected number, actual \"3\"", or the message a check gives). Decode with `reportInput` so
 * the leaves can name what was sent.
 */
export const formatArgumentIssue = (issue: SchemaIssue.Issue): string => drawTree(treeOf(issue))

interface Tree {
  readonly value: string
  readonly forest: ReadonlyArray<Tree>
}

const leaf = (value: string): Tree => ({ value, forest: [] })

const treeOf = (issue: SchemaIssue.Issue): Tree => {
  switch (issue._tag) {
    case "Pointer":
      return { value: issue.path.map(showKey).join(""), forest: [treeOf(issue.issue)] }
    case "Composite":
      // A value's checks failing together: one failure is shown alone, as its message.
      return issue.issues.length === 1 && !SchemaAST.isObjects(issue.ast) && !SchemaAST.isArrays(issue.ast)
        ? treeOf(issue.issues[0])
        : { value: expectedOf(issue.ast), forest: issue.issues.map(treeOf) }
    case "AnyOf":
      if (issue.issues.length === 1) return treeOf(issue.issues[0] as SchemaIssue.Issue)
      return issue.issues.length === 0
        ? leaf(expectedActual(typeOf(issue.ast), issue))
        : { value: expectedOf(issue.ast), forest: issue.issues.map(treeOf) }
    case "Encoding":
      return treeOf(issue.issue)
    case "Filter": {
      const message = messageOf(issue.filter.annotations)
      if (message !== undefined) return leaf(message)
      const expected = issue.filter.annotations?.["expected"]
      return typeof expected === "string" && issue.issue._tag === "InvalidValue" && messageOf(issue.issue.annotations) === undefined
        ? leaf(expectedActual(expected, issue))
        : treeOf(issue.issue)
    }
    case "MissingKey":
      return leaf(typeof issue.annotations?.messageMissingKey === "string" ? issue.annotations.messageMissingKey : "is missing")
    case "InvalidType":
      return leaf(messageOf(issue.ast.annotations) ?? expectedActual(typeOf(issue.ast), issue))
    case "InvalidValue": {
      const message = messageOf(issue.annotations)
      if (message !== undefined) return leaf(message)
      const expected = issue.annotations?.["expected"]
      return leaf(typeof expected === "string" ? expectedActual(expected, issue) : `Invalid value${actualOf(issue)}`)
    }
    case "UnexpectedKey":
      return leaf("is unexpected")
    case "Forbidden":
      return leaf(messageOf(issue.annotations) ?? "is forbidden")
    case "OneOf":
      return leaf(`Expected exactly one of ${expectedOf(issue.ast)}${actualOf(issue)}`)
  }
}

/** `["name"]` for a property, `[1]` for an element. */
const showKey = (key: PropertyKey): string => (typeof key === "number" ? `[${key}]` : `[${JSON.stringify(String(key))}]`)

const messageOf = (annotations: { readonly [key: string]: unknown } | undefined): string | undefined => {
  const message = annotations?.["message"]
  return typeof message === "string" ? message : undefined
}

const actualOf = (issue: SchemaIssue.Issue): string =>
  Object.hasOwn(issue, "input") ? `, actual ${showActual(issue.input)}` : ""

const expectedActual = (expected: string, issue: SchemaIssue.Issue): string => `Expected ${expected}${actualOf(issue)}`

const showActual = (value: unknown): string => {
  if (value === undefined) return "undefined"
  if (typeof value === "bigint") return `${value}n`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

const descriptionOf = (ast: SchemaAST.AST): string | undefined => {
  const description = ast.annotations?.["identifier"] ?? ast.annotations?.["title"] ?? ast.annotations?.["description"]
  return typeof description === "string" ? description : undefined
}

/** The shape a value was expected to have, written as a type (a description stands for its node). */
const expectedOf = (ast: SchemaAST.AST): string => {
  if (!SchemaAST.isString(ast) && !SchemaAST.isNumber(ast) && !SchemaAST.isBoolean(ast) && !SchemaAST.isObjects(ast)) {
    const described = descriptionOf(ast)
    if (described !== undefined) return described
  }
  if (ast.checks !== undefined && ast.checks.length > 0) {
    const described = ast.checks.map((check) => check.annotations?.description).find((d) => typeof d === "string")
    if (described !== undefined) return described
  }
  return typeOf(ast)
}

/** The node's own type, its parts described (what "Expected …, actual …" names). */
const typeOf = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Objects": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) return "{}"
      const properties = ast.propertySignatures.map((property) => {
        const optional = SchemaAST.isOptional(property.type)
        return `readonly ${String(property.name)}${optional ? "?" : ""}: ${expectedOf(property.type)}`
      })
      const indexes = ast.indexSignatures.map((index) => `readonly [x: ${expectedOf(index.parameter)}]: ${expectedOf(index.type)}`)
      return `{ ${[...properties, ...indexes].join("; ")} }`
    }
    case "Union":
      return ast.types.map(expectedOf).join(" | ")
    case "Literal":
      return typeof ast.literal === "string" ? JSON.stringify(ast.literal) : String(ast.literal)
    case "Arrays":
      return ast.rest.length === 1 && ast.elements.length === 0
        ? `ReadonlyArray<${expectedOf(ast.rest[0] as SchemaAST.AST)}>`
        : `readonly [${ast.elements.map(expectedOf).join(", ")}]`
    case "Suspend":
      return "<suspended schema>"
    case "Declaration":
      return "<declaration schema>"
    case "Enum":
      return ast.enums.map(([, value]) => JSON.stringify(value)).join(" | ")
    case "TemplateLiteral":
      return "string"
    case "ObjectKeyword":
      return "object"
    case "UniqueSymbol":
      return String(ast.symbol)
    default:
      return ast._tag.charAt(0).toLowerCase() + ast._tag.slice(1)
  }
}

/** The tree drawn as lines with box-drawing branches under each value. */
const drawTree = (tree: Tree): string => [tree.value, ...drawForest(tree.forest, "")].join("\n")

const drawForest = (forest: ReadonlyArray<Tree>, indentation: string): Array<string> =>
  forest.flatMap((tree, index) => {
    const last = index === forest.length - 1
    return [
      `${indentation}${last ? "└" : "├"}─ ${tree.value}`,
      ...drawForest(tree.forest, `${indentation}${last ? "   " : "│  "}`)
    ]
  })
