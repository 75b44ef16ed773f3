import { addEqualityTesters } from "@effect/vitest"

// Data and Equal values compare structurally in assertions.
addEqualityTesters()
