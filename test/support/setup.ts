import { addEqualityTesters } from "@effect/vitest"
// Tests reach loopback only, even when the code under test is wrong.
import "./loopbackGuard.mjs"

// Data and Equal values compare structurally in assertions.
addEqualityTesters()
