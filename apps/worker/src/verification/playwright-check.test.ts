import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "@rhumbatron/core";
import { getCandidate } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  candidateFor,
  importedProject,
  provisionedProject,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { playwrightToolchain } from "./playwright-check.ts";
import { drainVerifications } from "./runner.ts";

/**
 * A project's own Playwright tests as its browser check (playwright-check.ts), through the real
 * workflow: Rhumbatron's runner and Chromium inside bubblewrap, the project's preview command
 * started there, a JUnit report read per test, each test's screenshot and trace kept as blobs.
 */
const t = useTestDatabase();

const SERVER = `
const http = require("node:http");
const page = (title) => \`<!doctype html><title>\${title}</title><body><h1>\${title}</h1>
<button data-testid="add" onclick="n.textContent = Number(n.textContent) + 1">Add</button>
<span data-testid="count" id="n">0</span></body>\`;
http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/html" });
  res.end(page(TITLE));
}).listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening on " + process.env.PORT));
`;
const server = (title: string) => `const TITLE = ${JSON.stringify(title)};\n${SERVER}`;

const files = (extra: Record<string, string> = {}) => ({
  "server.js": server("Counter"),
  "e2e/counter.spec.js": [
    'const { test, expect } = require("@playwright/test");',
    'test("the counter counts clicks", async ({ page }) => {',
    '  await page.goto("/");',
    '  await page.getByTestId("add").click();',
    '  await page.getByTestId("add").click();',
    '  await expect(page.getByTestId("count")).toHaveText("2");',
    "});",
    "",
  ].join("\n"),
  "e2e/title.spec.ts": [
    'import { expect, test } from "@playwright/test";',
    'test("the page is titled Counter", async ({ page }) => {',
    '  await page.goto("/");',
    '  const heading: string = (await page.locator("h1").textContent()) ?? "";',
    '  expect(heading).toBe("Counter");',
    "});",
    "",
  ].join("\n"),
  ".rhumbatron/checks.yml": [
    "version: 1",
    "checks:",
    "  - id: browser",
    "    procedure: playwright",
    "    run: [node, server.js]",
    "    tests: e2e",
    "    timeout: 180",
    "",
  ].join("\n"),
  ...extra,
});

const note = (requestId: string, editPlan: { op: "write"; path: string; content: string }[]) => ({
  requestId,
  tasks: [{ key: "a", editPlan }],
});
const verify = (w: TestWorld) => drainVerifications(verificationDeps(w));
const view = (w: TestWorld, candidateId: string) => getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);

let outside: Server;
let outsideUrl = "";
beforeAll(async () => {
  if (!playwrightToolchain()?.chromium)
    throw new Error("no Chromium binary for the Sandbox (apt-get install chromium)");
  // A server on the host's loopback: the tests inside the Sandbox must not reach it.
  outside = createServer((_req, res) => res.end("reached the host"));
  await new Promise<void>((r) => outside.listen(0, "127.0.0.1", r));
  outsideUrl = `http://127.0.0.1:${(outside.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((r) => outside?.close(r));
});

describe("a playwright check", () => {
  it("runs the project's own tests (JS and TS) against its preview command: each test recorded, a screenshot and a trace kept per test", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, files());
    const c = await candidateFor(w, projectId, note("pw-green", [{ op: "write", path: "NOTES.md", content: "x\n" }]));
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "verified" });
    const e = (await view(w, c.candidateId)).evidence.find((x) => x.checkId === "browser");
    expect(e).toMatchObject({ status: "pass", coverage: "checked_supported", detail: "2 passed, 0 skipped, 0 failed" });
    const tests = (e?.tests ?? []) as { name: string; status: string }[];
    expect(tests.map((x) => [x.name, x.status]).sort()).toEqual([
      ["the counter counts clicks", "passed"],
      ["the page is titled Counter", "passed"],
    ]);
    const attachments = e?.attachments ?? [];
    expect(attachments.filter((k) => k.endsWith(".png")).length).toBeGreaterThanOrEqual(2);
    expect(attachments.filter((k) => k.endsWith("trace.zip")).length).toBe(2);
    for (const key of attachments) expect((await w.blobs.get(key))?.body.byteLength ?? 0).toBeGreaterThan(0);
    expect(e?.command).toMatch(/cli\.js test --config \.rhumbatron\/run\/playwright\.config\.mjs/);
  }, 300_000);

  it("fails a Change that breaks a test, naming it; a test that reaches past the Sandbox fails too", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(
      w,
      files({
        "e2e/outside.spec.js": [
          'const { test, expect } = require("@playwright/test");',
          'test("nothing outside is reachable", async ({ request }) => {',
          `  await expect(request.get(${JSON.stringify(outsideUrl)}, { timeout: 5000 })).rejects.toThrow();`,
          "});",
          "",
        ].join("\n"),
      }),
    );
    const broken = await candidateFor(
      w,
      projectId,
      note("pw-broken", [{ op: "write", path: "server.js", content: server("Counted") }]),
    );
    expect((await verify(w))[0]).toMatchObject({ candidateId: broken.candidateId, outcome: "rejected" });
    const v = await view(w, broken.candidateId);
    const e = v.evidence.find((x) => x.checkId === "browser");
    expect(e?.status).toBe("fail");
    expect(e?.detail).toMatch(/2 passed, 0 skipped, 1 failed; failing: title\.spec\.ts > the page is titled Counter/);
    const tests = (e?.tests ?? []) as { name: string; status: string }[];
    expect(tests.find((x) => x.status === "failed")?.name).toBe("the page is titled Counter");
    // The outside server was never reached: the test that tried passed because the request failed.
    expect(tests.find((x) => x.name === "nothing outside is reachable")?.status).toBe("passed");
    expect(v.gaps.find((g) => g.checkId === "browser")?.detail).toMatch(/failing: .*the page is titled Counter/);
  }, 300_000);

  it("a test folder with no tests is no signal, never a pass", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, {
      ...files(),
      "e2e/counter.spec.js": "// nothing here yet\n",
      "e2e/title.spec.ts": "// nor here\n",
    });
    const c = await candidateFor(w, projectId, note("pw-empty", [{ op: "write", path: "NOTES.md", content: "x\n" }]));
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "rejected" });
    const e = (await view(w, c.candidateId)).evidence.find((x) => x.checkId === "browser");
    expect(e?.coverage).toBe("checked_no_signal");
  }, 300_000);

  it("counts against the Candidate's browser runs: past them a check is skipped, saying so, and the Candidate is not verified", async () => {
    const base = loadConfig("dev");
    const w = await testWorld(t.db, { ...base, browser: { ...base.browser, maxRunsPerCandidate: 1 } });
    const checks = files()[".rhumbatron/checks.yml"].replace(
      "    timeout: 180\n",
      "    timeout: 180\n  - id: browser-again\n    procedure: playwright\n    run: [node, server.js]\n    tests: e2e\n",
    );
    const projectId = await importedProject(w, files({ ".rhumbatron/checks.yml": checks }));
    const c = await candidateFor(w, projectId, note("pw-budget", [{ op: "write", path: "NOTES.md", content: "x\n" }]));
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "rejected" });
    const evidence = (await view(w, c.candidateId)).evidence.filter((x) => x.checkId.startsWith("browser"));
    expect(evidence.map((x) => x.status).sort()).toEqual(["pass", "skipped"]);
    expect(evidence.find((x) => x.status === "skipped")?.detail).toBe("the Candidate has used its 1 browser runs");
  }, 300_000);
});

describe("the demo shop's browser check", () => {
  it("runs the shop's own Playwright test (templates/shop/e2e) against its built server at high risk: recorded by name, with a screenshot and a trace", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const c = await candidateFor(w, projectId, {
      requestId: "shop-pw",
      riskTier: "high",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "public/banner.html", content: "<p>hi</p>\n" }] }],
    });
    // The shop's own checks file and the default policy: the build check prepares dist/ first.
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "verified" });
    const v = await view(w, c.candidateId);
    const e = v.evidence.find((x) => x.checkId === "browser");
    expect(e, JSON.stringify(e)).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: "1 passed, 0 skipped, 0 failed",
    });
    expect(e?.command).toMatch(/cli\.js test --config \.rhumbatron\/run\/playwright\.config\.mjs/);
    expect(((e?.tests ?? []) as { name: string; status: string }[]).map((x) => [x.name, x.status])).toEqual([
      ["a wishlisted mug moves to the cart", "passed"],
    ]);
    const attachments = e?.attachments ?? [];
    const shots = attachments.filter((k) => k.endsWith(".png"));
    expect(shots.length).toBeGreaterThanOrEqual(1);
    expect(attachments.filter((k) => k.endsWith("trace.zip"))).toHaveLength(1);
    for (const key of shots) {
      const blob = await w.blobs.get(key);
      expect([...(blob?.body.subarray(0, 4) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }
    for (const key of attachments) expect((await w.blobs.get(key))?.body.byteLength ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it("rejects a Change that breaks the shop's wishlist flow, naming the failing test", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const c = await candidateFor(w, projectId, {
      requestId: "shop-pw-broken",
      riskTier: "high",
      tasks: [
        {
          key: "a",
          editPlan: [
            {
              op: "replace",
              path: "public/app.js",
              find: "button(`add-to-wishlist-",
              replace: "button(`save-for-later-",
            },
          ],
        },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "rejected" });
    const v = await view(w, c.candidateId);
    const e = v.evidence.find((x) => x.checkId === "browser");
    expect(e?.status).toBe("fail");
    expect(e?.detail).toMatch(/0 passed, 0 skipped, 1 failed; failing: .*a wishlisted mug moves to the cart/);
    expect(((e?.tests ?? []) as { name: string; status: string }[]).map((x) => [x.name, x.status])).toEqual([
      ["a wishlisted mug moves to the cart", "failed"],
    ]);
    expect((e?.attachments ?? []).filter((k) => k.endsWith(".png")).length).toBeGreaterThanOrEqual(1);
    expect(v.gaps.map((g) => [g.checkId, g.gap])).toEqual([["browser", "failed"]]);
  }, 300_000);
});
