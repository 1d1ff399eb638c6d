import { existsSync } from "node:fs";
import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_HINT, findChromium } from "@rhumbatron/core";
import { DEMO_ADMIN_STATE } from "./support/auth.ts";

const executablePath = findChromium(process.env, existsSync);
if (!executablePath) throw new Error(CHROMIUM_INSTALL_HINT);
const port = Number(process.env.E2E_PORT ?? 3199);

// The whole product (Postgres, migrations, seed, worker, web) is started once by global-setup.ts
// on its own fresh database; specs drive it in Chromium.
export default defineConfig({
  testDir: "./specs",
  globalSetup: "./support/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: true,
  timeout: 30_000,
  reporter: process.env.E2E_JSON_REPORT
    ? [["list"], ["json", { outputFile: process.env.E2E_JSON_REPORT }]]
    : [["list"]],
  use: {
    baseURL: `http://localhost:${port}`,
    // Signed in as the demo admin (global-setup.ts); specs/sign-in starts signed out.
    storageState: DEMO_ADMIN_STATE,
    trace: "off",
    screenshot: "only-on-failure",
    launchOptions: { executablePath, args: CHROMIUM_ARGS },
  },
  outputDir: "../.data/test-results/e2e",
});
