import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { freePort } from "@rhumbatron/fixtures";
import { type ProductProcess, startProductProcess, waitForAnswer } from "../../support/processes.ts";
import { ROOT } from "../../support/root.ts";

/**
 * The deployment split against the production build: a second `next start` of the same build with
 * RHUMBATRON_FUNCTION_HOST=split serves the web app's share of the function registry at
 * /api/inngest. Inngest itself is outside this machine, so a local server speaking its register
 * API stands in for it and records what the app registers.
 */
const WEB_FUNCTIONS = [
  "analytics-projector",
  "event-router",
  "heartbeat",
  "maintenance",
  "outbox-publisher",
  "queue-agent-wakeups",
  "queue-dead-letter",
  "queue-release",
  "queue-verification",
  "queue-webhooks",
];

const SIGNING_KEY = "signkey-prod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
let web: ProductProcess;
let inngest: Server;
const registered: { url: string; body: { functions: { id: string; triggers: unknown[] }[] } }[] = [];
let base = "";

test.beforeAll(async () => {
  inngest = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      if (req.method === "POST") registered.push({ url: req.url ?? "", body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, modified: true }));
    });
  });
  await new Promise<void>((r) => inngest.listen(0, "127.0.0.1", r));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  web = startProductProcess(join(ROOT, "node_modules/.bin/next"), ["start", "-p", String(port)], {
    cwd: join(ROOT, "apps/web"),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      // Never queried by these requests: introspection, registration and refused calls touch no data.
      DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none",
      RHUMBATRON_ENV: "dev",
      RHUMBATRON_EXECUTOR: "inngest",
      RHUMBATRON_FUNCTION_HOST: "split",
      INNGEST_SIGNING_KEY: SIGNING_KEY,
      INNGEST_EVENT_KEY: "test-event-key",
      INNGEST_BASE_URL: `http://127.0.0.1:${(inngest.address() as AddressInfo).port}`,
      RHUMBATRON_LOG_LEVEL: "warn",
    },
    prefix: "[web-split] ",
    quiet: !process.env.E2E_VERBOSE,
  });
  await waitForAnswer(`${base}/api/health`, 60_000, web.exited);
});

test.afterAll(async () => {
  await web.stop(10_000);
  await new Promise((r) => inngest.close(r));
});

/** Inngest's request signature: HMAC-SHA256 of body + timestamp with the key's hex part. */
function signature(body: string): string {
  const t = String(Math.floor(Date.now() / 1000));
  const s = createHmac("sha256", SIGNING_KEY.replace(/^signkey-\w+-/, ""))
    .update(body + t)
    .digest("hex");
  return `t=${t}&s=${s}`;
}

test("GET /api/inngest needs Inngest's signature, and then counts the web app's functions", async () => {
  const unsigned = await fetch(`${base}/api/inngest`);
  expect(unsigned.status).toBe(401);
  const res = await fetch(`${base}/api/inngest`, { headers: { "x-inngest-signature": signature("") } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    mode: "cloud",
    function_count: WEB_FUNCTIONS.length,
    has_signing_key: true,
    authentication_succeeded: true,
  });
});

test("registration sends every function assigned to the web app, with its crons and events", async () => {
  const res = await fetch(`${base}/api/inngest`, { method: "PUT" });
  expect(res.status).toBe(200);
  const last = registered.at(-1);
  expect(last?.url).toMatch(/register/);
  const fns = last?.body.functions ?? [];
  const ids = fns.map((f) => f.id.replace(/^rhumbatron-web-/, "")).sort();
  expect(ids).toEqual(WEB_FUNCTIONS);
  const byId = new Map(fns.map((f) => [f.id.replace(/^rhumbatron-web-/, ""), f.triggers]));
  expect(byId.get("heartbeat")).toEqual(
    expect.arrayContaining([expect.objectContaining({ cron: expect.any(String) })]),
  );
  expect(byId.get("outbox-publisher")).toEqual(
    expect.arrayContaining([expect.objectContaining({ event: expect.stringMatching(/outbox/) })]),
  );
  // The Sandbox and source-store functions are the worker host's.
  for (const id of ["agent-runner", "verification-workflow", "queue-integration", "queue-indexing"])
    expect(ids).not.toContain(id);
});

test("an unsigned call to run a function is refused in production mode", async () => {
  const res = await fetch(`${base}/api/inngest?fnId=rhumbatron-web-heartbeat&stepId=step`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ event: { name: "inngest/scheduled.timer", data: {} }, events: [], steps: {}, ctx: {} }),
  });
  expect(res.status).toBe(401);
});
