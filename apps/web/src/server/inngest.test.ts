import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, scriptedProvider } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import {
  buildFunctions,
  createInngestExecutor,
  createLogger,
  functionsForHost,
  INNGEST_PATH,
  INNGEST_SPLIT_APP_IDS,
  type InngestExecutor,
  workerIdentity,
} from "@rhumbatron/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The deployment's function list, as Inngest Cloud (or a self-hosted server) sees it when it syncs
 * the two apps (docs/deploy.md): the web app's /api/inngest route (the real `inngest/next` serve
 * handler, in-process) and the worker host's /api/inngest (the real executor on a port). Inngest is
 * outside this machine, so a local server speaking its register API stands in for it and records
 * what each app registers. Together the two lists must be the function registry, each function
 * once, with the triggers, concurrency and retries set out below.
 */
const EVERY_MINUTE = "* * * * *";
const ONE_AT_A_TIME = { limit: 1, key: "event.data.key" };

interface Served {
  host: "web" | "worker";
  cron: string | null;
  /** The nudge channel whose Inngest event (`rhumbatron/nudge.<channel>`) starts a run. */
  nudge: string | null;
  retries: number;
}

/**
 * Written out by hand, not read from the registry, so a function that goes missing or changes its
 * schedule fails here. The numbers: the event router's cron every minute (one stream per
 * tick), maintenance daily at 04:17 UTC, the forks sweep daily, a queue consumer and every other
 * function one run at a time (the indexing queue's "concurrency 1"; our single-flight per run key,
 * and a queue's nudge carries no key, so its consumer runs alone). The other crons are the
 * backstops of nudges (config.ts); retries are Inngest's, the queues' own are in their policies.
 */
const EXPECTED: Record<string, Served> = {
  heartbeat: { host: "web", cron: EVERY_MINUTE, nudge: "heartbeat", retries: 0 },
  "outbox-publisher": { host: "web", cron: EVERY_MINUTE, nudge: "outbox", retries: 3 },
  "event-router": { host: "web", cron: EVERY_MINUTE, nudge: "event_router", retries: 3 },
  "analytics-projector": { host: "web", cron: EVERY_MINUTE, nudge: "analytics", retries: 3 },
  maintenance: { host: "web", cron: "17 4 * * *", nudge: null, retries: 3 },
  "queue-agent-wakeups": { host: "web", cron: EVERY_MINUTE, nudge: "queue_agent_wakeups", retries: 3 },
  "queue-verification": { host: "web", cron: EVERY_MINUTE, nudge: "queue_verification", retries: 3 },
  "queue-release": { host: "web", cron: EVERY_MINUTE, nudge: "queue_release", retries: 3 },
  "queue-webhooks": { host: "web", cron: EVERY_MINUTE, nudge: "queue_webhooks", retries: 3 },
  "queue-dead-letter": { host: "web", cron: EVERY_MINUTE, nudge: "queue_dead_letter", retries: 3 },
  "queue-integration": { host: "worker", cron: EVERY_MINUTE, nudge: "queue_integration", retries: 3 },
  "queue-indexing": { host: "worker", cron: EVERY_MINUTE, nudge: "queue_indexing", retries: 3 },
  "agent-runner": { host: "worker", cron: EVERY_MINUTE, nudge: "agent_runs", retries: 0 },
  "forks-sweep-tick": { host: "worker", cron: "0 3 * * *", nudge: null, retries: 3 },
  "verification-workflow": { host: "worker", cron: EVERY_MINUTE, nudge: "workflow_verification", retries: 0 },
  "release-workflow": { host: "worker", cron: EVERY_MINUTE, nudge: "workflow_release", retries: 0 },
};

interface RegisteredFunction {
  id: string;
  triggers: ({ cron: string } | { event: string })[];
  concurrency?: unknown;
  steps: Record<string, { retries?: { attempts: number }; runtime: { url: string } }>;
}
interface Registration {
  url: string;
  appName: string;
  functions: RegisteredFunction[];
}

/** The web app's database, from the test run's Postgres (the route builds its functions on a client). */
const t = useTestDatabase();
const SIGNING_KEY = `signkey-test-${"ab".repeat(32)}`;
const registrations: Registration[] = [];
let inngest: Server;
let worker: InngestExecutor;

/** Inngest's register endpoint, recording each sync and answering as Inngest does. */
function standInInngest(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      if (req.method === "POST" && req.url?.startsWith("/fn/register")) registrations.push(JSON.parse(body));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, modified: true }));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  inngest = await standInInngest();
  const baseUrl = `http://127.0.0.1:${(inngest.address() as AddressInfo).port}`;
  // The web app's settings as on Vercel. settings.ts parses process.env once, on the route's first
  // request (inngest.ts is imported inside the test, after this), so everything it needs is set here:
  // the database is this file's own, never one from the machine's environment.
  Object.assign(process.env, {
    DATABASE_URL: t.url,
    RHUMBATRON_EXECUTOR: "inngest",
    RHUMBATRON_FUNCTION_HOST: "split",
    INNGEST_SIGNING_KEY: SIGNING_KEY,
    INNGEST_EVENT_KEY: "test-event-key",
    INNGEST_BASE_URL: baseUrl,
  });
  delete process.env.INNGEST_DEV;
  // The worker host's share, built as main.ts builds it; nothing here runs, so its parts are stand-ins.
  const config = loadConfig("dev");
  const all = buildFunctions(workerHostRegistry(config));
  worker = createInngestExecutor({
    db: {} as never,
    config,
    logger: createLogger("warn"),
    worker: workerIdentity("inngest", new Date("2030-01-01T00:00:00Z")),
    now: () => new Date(),
    functions: functionsForHost(all, "worker"),
    settings: {
      INNGEST_SIGNING_KEY: SIGNING_KEY,
      INNGEST_EVENT_KEY: "test-event-key",
      INNGEST_BASE_URL: baseUrl,
      INNGEST_DEV: undefined,
      RHUMBATRON_WORKER_PORT: 3030,
    },
    appId: INNGEST_SPLIT_APP_IDS.worker,
    port: 0,
    host: "127.0.0.1",
  });
  await worker.start();
});

afterAll(async () => {
  await worker?.stop();
  await new Promise((r) => inngest?.close(r));
  // The route's client (db.ts) is closed before the test database's own afterAll drops the database.
  if (process.env.DATABASE_URL === t.url) await (await import("./db.ts")).getDb().$disconnect();
});

/** Syncs one app (a PUT on its serve URL, as Inngest's deploy sync does) and returns what it registered. */
async function sync(put: () => Promise<Response>): Promise<Registration> {
  const before = registrations.length;
  const res = await put();
  expect(res.status).toBe(200);
  expect(registrations).toHaveLength(before + 1);
  return registrations[before] as Registration;
}

function asServed(reg: Registration, host: Served["host"], prefix: string) {
  return reg.functions.map((f) => {
    const crons = f.triggers.flatMap((t) => ("cron" in t ? [t.cron] : []));
    const events = f.triggers.flatMap((t) => ("event" in t ? [t.event] : []));
    expect(crons.length + events.length).toBe(f.triggers.length);
    expect(crons.length).toBeLessThanOrEqual(1);
    expect(events.length).toBeLessThanOrEqual(1);
    return {
      id: f.id.slice(prefix.length + 1),
      prefixed: f.id.startsWith(`${prefix}-`),
      served: {
        host,
        cron: crons[0] ?? null,
        nudge: events[0]?.replace(/^rhumbatron\/nudge\./, "") ?? null,
        retries: Object.values(f.steps)[0]?.retries?.attempts ?? -1,
      } satisfies Served,
      concurrency: f.concurrency,
      stepUrl: Object.values(f.steps)[0]?.runtime.url ?? "",
    };
  });
}

/** The worker host's registry slices, as main.ts gives them; nothing here runs, so its parts are stand-ins. */
function workerHostRegistry(config: ReturnType<typeof loadConfig>) {
  return {
    config,
    nudger: pgNotifyNudger,
    blobs: localFolderBlobStore("/nonexistent/blobs"),
    db: {} as never,
    source: {} as never,
    sandbox: {} as never,
    provider: scriptedProvider,
    allowlist: [],
    releaseRoot: "/nonexistent/releases",
    browserCheck: async (): Promise<never> => {
      throw new Error("not called");
    },
  };
}

describe("the functions the deployment serves at /api/inngest", () => {
  it("are the registry, each once, on its host, with the triggers config gives it and one run at a time", async () => {
    const { inngestRoute } = await import("./inngest.ts");
    const webUrl = `https://rhumbatron.example.com${INNGEST_PATH}`;
    const web = await sync(() => inngestRoute("PUT", new Request(webUrl, { method: "PUT" }), {}));
    const onWorker = await sync(() =>
      fetch(`http://127.0.0.1:${worker.port}${INNGEST_PATH}`, { method: "PUT" }).then(async (r) => {
        await r.arrayBuffer();
        return r;
      }),
    );
    expect(web.appName).toBe(INNGEST_SPLIT_APP_IDS.web);
    expect(onWorker.appName).toBe(INNGEST_SPLIT_APP_IDS.worker);
    expect(web.url).toBe(webUrl);

    const served = [
      ...asServed(web, "web", INNGEST_SPLIT_APP_IDS.web),
      ...asServed(onWorker, "worker", INNGEST_SPLIT_APP_IDS.worker),
    ];
    // Every id once across both apps, and exactly the registry (the web app builds it without the source parts).
    const ids = served.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    const registry = buildFunctions(workerHostRegistry(loadConfig("dev"))).map((f) => f.id);
    expect([...ids].sort()).toEqual([...registry].sort());
    expect(Object.fromEntries(served.map((s) => [s.id, s.served]))).toEqual(EXPECTED);
    for (const s of served) {
      expect(s.prefixed, s.id).toBe(true);
      expect(s.concurrency, s.id).toEqual(ONE_AT_A_TIME);
    }
    // Inngest calls each step back at the URL the app was synced from.
    for (const s of served.filter((x) => x.served.host === "web")) expect(s.stepUrl.startsWith(webUrl)).toBe(true);
  });
});

describe("apps/web/vercel.json", () => {
  const webRoot = fileURLToPath(new URL("../..", import.meta.url));
  const vercel = JSON.parse(readFileSync(join(webRoot, "vercel.json"), "utf8")) as {
    framework: string;
    installCommand: string;
    buildCommand: string;
    functions: Record<string, { maxDuration?: number }>;
  };

  it("gives the route Inngest calls its own time limit, naming a file that exists (Vercel refuses a pattern that matches none)", () => {
    const patterns = Object.keys(vercel.functions);
    expect(patterns).toEqual([`src/app${INNGEST_PATH}/route.ts`]);
    for (const p of patterns) expect(existsSync(join(webRoot, p)), p).toBe(true);
    // Longer than a run takes (a bounded drain); docs/deploy.md says to lower it if the plan allows less.
    expect(vercel.functions[patterns[0] as string]?.maxDuration).toBe(300);
  });

  it("installs and builds from the repository root, where the workspaces are", () => {
    expect(vercel.framework).toBe("nextjs");
    const root = join(webRoot, "../..");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      workspaces: string[];
      scripts: Record<string, string>;
    };
    expect(pkg.workspaces).toContain("apps/web");
    expect(vercel.installCommand).toBe("cd ../.. && npm ci");
    expect(vercel.buildCommand).toBe("cd ../.. && npm run build");
    expect(pkg.scripts.build).toBe("npm run build --workspace @rhumbatron/web");
  });
});
