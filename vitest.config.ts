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
    // One generous outer limit per test: tests wait for conditions, never for a duration, so a busy
    // machine (npm run test:loaded) only makes them slower. A hung test still fails, later.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
