import { defineConfig } from "vitest/config";

// One run covers unit tests (pure, packages/core) and integration tests against a real Postgres.
// Three workers on these two-core machines: most files wait on Postgres, git and child processes
// (a run with two kept the cores under 40 % busy), and `npm test` builds the web app beside them.
export default defineConfig({
  // The web app's components (.tsx, `jsx: preserve` for Next) are rendered by a few tests
  // (react-dom/server, no browser): compile their JSX for React's automatic runtime.
  oxc: { jsx: { runtime: "automatic" } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/.next/**", "e2e/**"],
    globalSetup: ["packages/db/src/testing/global-setup.ts"],
    pool: "forks",
    maxWorkers: 3,
    // One generous outer limit per test: tests wait for conditions, never for a duration, so a busy
    // machine (npm run test:loaded) only makes them slower. A hung test still fails, later.
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
