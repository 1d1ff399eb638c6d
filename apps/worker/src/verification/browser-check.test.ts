import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type BlobObject,
  type BlobStore,
  BROWSER_CHECK_ARGS,
  DEFAULT_COMMAND_ALLOWLIST,
  findChromium,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import { stepsBrowserCheck } from "@rhumbatron/core/testing";
import { type BrowserServer, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapAvailable, bubblewrapSandbox, sandboxLimits } from "../sandbox/index.ts";
import { testConfig } from "../testing.ts";
import { type BrowserCheckInput, runBrowserCheck } from "./browser-check.ts";
import { warmBrowser } from "./warm-browser.ts";

const TEMPLATE = fileURLToPath(new URL("../../../../templates/shop", import.meta.url));
const typescriptDir = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000d3";
const SESSION_MAX_MS = testConfig.browser.sessionMaxSeconds * 1000;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

let root: string;
let built: SandboxWorkspace;
let variant: (dirName: string, change?: (path: string) => Promise<void>) => Promise<SandboxWorkspace>;

function memoryBlobs(): BlobStore & { objects: Map<string, BlobObject> } {
  const objects = new Map<string, BlobObject>();
  return {
    objects,
    put: async (key, body, metadata = {}) => void objects.set(key, { body, metadata }),
    get: async (key) => objects.get(key) ?? null,
    has: async (key) => objects.has(key),
    delete: async (key) => void objects.delete(key),
    list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)).sort(),
  };
}

/**
 * A browser check of declared steps on the shop's page (the wishlist and cart flow), as a project's
 * checks file declares one; the shop's own checks file runs its Playwright tests instead.
 */
const stepsCheck = stepsBrowserCheck();
const STEPS = stepsCheck.steps ?? [];
const START = stepsCheck.run ?? [];

const check = (
  workspace: SandboxWorkspace,
  extra: Partial<Pick<BrowserCheckInput, "steps" | "browser" | "start">> = {},
) => {
  const blobs = memoryBlobs();
  const result = runBrowserCheck({
    workspace,
    blobs,
    keyPrefix: `evidence/cand_test/${workspace.path.split("/").pop()}`,
    sessionMaxMs: SESSION_MAX_MS,
    start: START,
    steps: STEPS,
    ...extra,
  });
  return result.then((r) => ({ ...r, blobs }));
};

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok)
    throw new Error(`bubblewrap cannot run here (${probe.reason}); install it: apt-get install -y bubblewrap`);
  if (!findChromium(process.env, existsSync)) throw new Error("Chromium is missing: apt-get install -y chromium");
  root = await mkdtemp(join(tmpdir(), "rhumbatron-browser-"));
  const sandbox = await bubblewrapSandbox({
    root,
    toolchainPaths: [dirname(process.execPath), typescriptDir],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(testConfig),
  });
  // Build the template once in the sandbox; each variant starts from a copy of the built tree.
  built = await sandbox.open({ projectId: PROJECT, dirName: "cand-built" });
  await cp(TEMPLATE, built.path, { recursive: true, filter: (src) => !/\/(dist|node_modules)$/.test(src) });
  const build = await built.run({ argv: ["npm", "run", "-s", "build"], timeoutMs: 120_000 });
  if (build.exitCode !== 0) throw new Error(`template build failed: ${build.stdout}\n${build.stderr}`);
  variant = async (dirName, change) => {
    const ws = await sandbox.open({ projectId: PROJECT, dirName });
    await cp(built.path, ws.path, { recursive: true });
    await change?.(ws.path);
    return ws;
  };
}, 180_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("browser check", () => {
  it("passes the steps a checks file declares on the shop's page and stores screenshots", async () => {
    expect(STEPS).toHaveLength(9);
    const r = await check(built);
    expect(r, r.log).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      blockedRequests: 0,
      blockedHosts: [],
    });
    expect(r.detail).toBe("all 9 steps passed");
    expect(r.screenshots.length).toBeGreaterThanOrEqual(1);
    for (const key of r.screenshots) {
      expect(key).toMatch(/^evidence\/cand_test\/cand-built\/[a-z]+\.png$/);
      const blob = r.blobs.objects.get(key);
      expect([...(blob?.body.subarray(0, 4) ?? [])]).toEqual(PNG_SIGNATURE);
      expect(blob?.metadata["content-type"]).toBe("image/png");
    }
    // The app was stopped and its socket cleaned up.
    expect(existsSync(join(built.path, ".preview.sock"))).toBe(false);
  });

  it("drives the steps a project gives, by data-testid or CSS selector", async () => {
    const steps = [{ goto: "/" }, { click: "add-to-cart-mug" }, { see: "css=[data-testid=cart-item-mug]" }];
    const r = await check(built, { steps });
    expect(r, r.log).toMatchObject({ status: "pass", coverage: "checked_supported", detail: "all 3 steps passed" });
    expect(r.screenshots).toEqual(["evidence/cand_test/cand-built/final.png"]);
    const missing = await check(built, { steps: [{ goto: "/" }, { see: "no-such-hook" }] });
    expect(missing).toMatchObject({ status: "fail", coverage: "checked_supported" });
    expect(missing.detail).toMatch(/^step 2 of 2 failed, "see no-such-hook": /);
  });

  it("fails a page whose wishlist button is not rendered", async () => {
    const ws = await variant("cand-broken", async (path) => {
      const file = join(path, "public", "app.js");
      const app = await readFile(file, "utf8");
      const broken = app.replace("button(`add-to-wishlist-", "button(`save-for-later-");
      expect(broken).not.toBe(app);
      const noisy = 'console.error("wishlist hook removed"); setTimeout(() => { throw new Error("late boom"); });';
      await writeFile(file, `${broken}\n${noisy}\n`);
    });
    const r = await check(ws);
    expect(r, r.log).toMatchObject({ status: "fail", coverage: "checked_supported" });
    expect(r.detail).toMatch(/^step 4 of 9 failed, "click add-to-wishlist-mug"/);
    expect(r.screenshots).toContain("evidence/cand_test/cand-broken/failure.png");
    expect(r.log).toContain("console.error: wishlist hook removed");
    expect(r.log).toContain("pageerror: late boom");
  });

  it("blocks and counts requests to any other host, and the flow still passes", async () => {
    const ws = await variant("cand-beacon", async (path) => {
      const file = join(path, "public", "index.html");
      const html = await readFile(file, "utf8");
      await writeFile(file, html.replace("<h1>", '<img src="http://example.com/pixel.png" alt="" /><h1>'));
    });
    const r = await check(ws);
    expect(r, r.log).toMatchObject({ status: "pass", coverage: "checked_supported", blockedHosts: ["example.com"] });
    expect(r.blockedRequests).toBeGreaterThanOrEqual(1);
    expect(r.log).toContain("blocked: GET http://example.com/pixel.png");
  });

  it("reports an app that cannot start as an error, not a failed page", async () => {
    const ws = await variant("cand-nostart", (path) => rm(join(path, "dist", "src", "server.js")));
    const r = await check(ws);
    expect(r).toMatchObject({ status: "error", coverage: "not_checked", screenshots: [] });
    expect(r.detail).toMatch(/^the app did not start: it exited \(code 1/);
    expect(r.detail).toContain("server.js");
  });

  it("reports a session budget spent before the flow could run as an error, and stops the app", async () => {
    const r = await runBrowserCheck({
      workspace: built,
      blobs: memoryBlobs(),
      keyPrefix: "e/short",
      sessionMaxMs: 5_000,
      start: START,
      steps: STEPS,
    });
    expect(r, r.log).toMatchObject({ status: "error", coverage: "not_checked", screenshots: [] });
    expect(r.detail).toBe("the session budget ran out before the flow ran");
    expect(existsSync(join(built.path, ".preview.sock"))).toBe(false);
  });

  it("reports a missing Chromium as an error", async () => {
    const r = await runBrowserCheck({
      workspace: built,
      blobs: memoryBlobs(),
      keyPrefix: "evidence/none",
      sessionMaxMs: SESSION_MAX_MS,
      start: START,
      steps: STEPS,
      chromiumPath: "/nonexistent/chromium",
    });
    expect(r).toMatchObject({ status: "error", coverage: "not_checked" });
    expect(r.detail).toMatch(/Chromium was not found/);
  });
});

describe("the warm browser", () => {
  it("serves check after check from one Chromium, and launches a new one after its process crashed", async () => {
    const servers: BrowserServer[] = [];
    // Launched as a server so the test can kill its process; connected to like any browser.
    const warm = warmBrowser({
      idleMs: 60_000,
      launch: async (executablePath, timeout) => {
        const server = await chromium.launchServer({ executablePath, args: BROWSER_CHECK_ARGS, timeout });
        servers.push(server);
        return chromium.connect(server.wsEndpoint());
      },
    });
    const run = () => check(built, { browser: warm });
    const current = () => warm.current;
    try {
      const first = await run();
      const second = await run();
      expect(first, first.log).toMatchObject({ status: "pass", coverage: "checked_supported" });
      expect(second, second.log).toMatchObject({ status: "pass", coverage: "checked_supported" });
      expect(warm.launches).toBe(1);
      // Each check had its own context, closed when it ended; the browser stayed up.
      expect(warm.current?.isConnected()).toBe(true);
      expect(warm.current?.contexts()).toEqual([]);

      servers[0]?.process().kill("SIGKILL");
      while (current() !== null) await new Promise((r) => setTimeout(r, 20));

      const after = await run();
      expect(after, after.log).toMatchObject({ status: "pass", coverage: "checked_supported" });
      expect(warm.launches).toBe(2);
      expect(current()?.isConnected()).toBe(true);
    } finally {
      await warm.close();
      for (const s of servers) await s.close().catch(() => {});
    }
    expect(warm.current).toBe(null);
  });
});
