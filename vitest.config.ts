import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    setupFiles: ["test/support/setup.ts"],
    // dist/ up to date for the tests that spawn the compiled app.
    globalSetup: ["test/support/buildDist.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
