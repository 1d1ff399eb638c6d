import { defineConfig } from "vitest/config";

// One run covers unit tests (pure, packages/core) and integration tests against a real Postgres.
// Two workers: these machines have two cores.
export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/.next/**", "e2e/**"],
    globalSetup: ["packages/db/src/testing/global-setup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
