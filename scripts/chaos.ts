/**
 * `npm run chaos`: fault trials with real processes, a real Postgres and real git. Starts the whole
 * product as `npm start` does (embedded Postgres in a data folder of its own, web and worker under
 * the supervisor), drives several Changes to promotion through the HTTP API, and meanwhile kills
 * the worker or the web process with SIGKILL at random moments (the supervisor restarts them) and
 * stops the embedded Postgres once underneath everything (a fast shutdown of its server process,
 * which npm start's watch of its Postgres starts again: scripts/lib/watch-postgres.ts). Then it checks the
 * invariants (scripts/chaos/invariants.ts) and prints one JSON object: kills, the longest stall
 * after a kill (from the kill to the next Event any process wrote), and each invariant.
 * Exit code 0 only when every Change was promoted and every invariant holds.
 *
 * Settings: CHAOS_KILLS (20), CHAOS_CHANGES (6), CHAOS_SEED (random), CHAOS_PG_RESTART (1; 0 skips
 * it), CHAOS_LIMIT_SECONDS (1800, the outer limit of the whole trial), CHAOS_TARGETS (`worker,web`;
 * `web` alone leaves the worker to live through everything, the Postgres restart included),
 * CHAOS_VERBOSE (1 shows the stack's own output at info level).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canonicalRepo, parseSettings, repoNamespace } from "@rhumbatron/core";
import { createRhumbatronClient } from "@rhumbatron/sdk";
import pg from "pg";
import { checkInvariants } from "./chaos/invariants.ts";
import { freePort } from "./lib/ports.ts";
import { runningPostmaster } from "./lib/postmaster.ts";
import { signalGroup } from "./lib/processes.ts";
import { ROOT, type Stack, startStack } from "./lib/stack.ts";

const env = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === "" ? fallback : Number(v);
};
const KILLS = env("CHAOS_KILLS", 20);
const CHANGES = env("CHAOS_CHANGES", 6);
const PG_RESTART = env("CHAOS_PG_RESTART", 1) > 0;
const LIMIT_MS = env("CHAOS_LIMIT_SECONDS", 1800) * 1000;
const TARGETS = (process.env.CHAOS_TARGETS || "worker,web").split(",").filter((t) => t === "worker" || t === "web");
const VERBOSE = env("CHAOS_VERBOSE", 0) > 0;
let seed = env("CHAOS_SEED", Math.floor(Math.random() * 2 ** 31));
const SEED = seed;

/** A small seeded generator (mulberry32), so a failing trial can be replayed with CHAOS_SEED. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const between = (lo: number, hi: number) => lo + random() * (hi - lo);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);
const started = Date.now();
const elapsed = () => Math.round((Date.now() - started) / 1000);

async function main(): Promise<number> {
  mkdirSync(join(ROOT, ".data"), { recursive: true });
  const dataDir = mkdtempSync(join(ROOT, ".data", "chaos-"));
  // mkdtemp makes it private; the embedded Postgres runs as its own user when we are root.
  chmodSync(dataDir, 0o755);
  const [port, gitPort, pgPort, workerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  log(`seed ${SEED}; data in ${dataDir}; ${KILLS} kills, ${CHANGES} Changes`);
  const stack = await startStack({
    databaseUrl: undefined,
    dataDir,
    embeddedPgPort: pgPort,
    port,
    dev: false,
    quiet: !VERBOSE,
    env: {
      ...process.env,
      DATABASE_URL: "",
      RHUMBATRON_ENV: "dev",
      RHUMBATRON_GIT_PORT: String(gitPort),
      RHUMBATRON_WORKER_PORT: String(workerPort),
      RHUMBATRON_LOG_LEVEL: VERBOSE ? "info" : "warn",
    },
    log: (l) => log(`stack: ${l}`),
  });
  try {
    return await trial(stack, dataDir);
  } finally {
    await stack.stop();
    if (!process.env.CHAOS_KEEP) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function trial(stack: Stack, dataDir: string): Promise<number> {
  const client = createRhumbatronClient({ url: stack.url, token: await adminToken(stack) });
  const tenantId = await client.tenantId();
  const { projectId } = await retrying("create the project", () =>
    client.trpc.projects.create.mutate({ tenantId, name: `chaos-${SEED}` }),
  );
  await until("the project is provisioned", async () => {
    const r = await query<{ status: string }>(stack, "SELECT status FROM projects WHERE id = $1", [projectId]);
    return r[0]?.status === "active";
  });

  // Changes arrive while the kills go on, so kills find work in flight.
  const changeIds: string[] = [];
  const createChange = async (i: number) => {
    const path = `src/chaos-${i}.ts`;
    const { changeId } = await retrying(`create Change ${i}`, () =>
      client.createChange(
        projectId,
        {
          title: `Chaos ${i}`,
          description: "Written by npm run chaos.",
          riskTier: "low",
          tasks: [
            {
              key: "a",
              title: `Write ${path}`,
              dependsOn: [],
              intents: { paths: [path], prefixes: [] },
              editPlan: [{ op: "write", path, content: `export const chaos${i} = ${i};\n` }],
            },
          ],
        },
        // The same key on every retry: a retry after a lost answer finds the first Change.
        { clientRequestId: `chaos-${SEED}-${i}`, land: true },
      ),
    );
    changeIds.push(changeId);
  };
  // Two at once (they race for main), then one more every few kills, so work is in flight throughout.
  const firstWave = Math.min(CHANGES, 2);
  for (let i = 0; i < firstWave; i++) await createChange(i);
  const killsPerChange = Math.max(1, Math.floor(KILLS / Math.max(1, CHANGES - firstWave + 1)));

  const stalls: number[] = [];
  const killed: { at: number; process: string; pid: number }[] = [];
  let pgRestartedAt: number | null = null;
  for (let k = 0; k < KILLS; k++) {
    await sleep(between(2_000, 9_000));
    if (k > 0 && k % killsPerChange === 0 && changeIds.length < CHANGES) await createChange(changeIds.length);
    if (PG_RESTART && pgRestartedAt === null && k === Math.floor(KILLS / 3)) {
      pgRestartedAt = elapsed();
      const [before, after] = await stopPostgresUnderneath(dataDir);
      log(
        `stopped the embedded Postgres (pid ${before}) at ${pgRestartedAt} s; npm start started it again (pid ${after})`,
      );
    }
    const pick = random() < 0.6 ? "worker" : "web";
    const name = TARGETS.includes(pick) ? pick : (TARGETS[0] ?? pick);
    const pid = await until(`a running ${name}`, async () => stack.pidOf(name) ?? false);
    const at = Date.now();
    const lastEvent = await latestEventAt(stack);
    signalGroup(pid, "SIGKILL");
    killed.push({ at: elapsed(), process: name, pid });
    log(`kill ${k + 1}/${KILLS}: ${name} (pid ${pid}) at ${elapsed()} s`);
    // The stall: from the kill until any process writes the next Event (while work remains).
    void measureStall(stack, changeIds, at, lastEvent).then((ms) => {
      if (ms !== null) stalls.push(ms);
    });
    // Keep within the supervisor's limit (5 restarts a minute per process).
    await until(`${name} restarted`, async () => (stack.pidOf(name) ?? pid) !== pid);
  }
  for (let i = changeIds.length; i < CHANGES; i++) await createChange(i);
  log(`kills done at ${elapsed()} s; waiting for ${changeIds.length} Changes to be promoted`);
  await until(
    "every Change promoted",
    async () => {
      const r = await query<{ n: string }>(
        stack,
        "SELECT count(*) AS n FROM changes WHERE id = ANY($1::text[]) AND status = 'promoted'",
        [changeIds],
      );
      return Number(r[0]?.n) === changeIds.length;
    },
    LIMIT_MS - (Date.now() - started),
  );
  const settings = parseSettings({ ...process.env, RHUMBATRON_ENV: "dev" });
  const repoDir = join(
    dataDir,
    "git",
    repoNamespace(settings.RHUMBATRON_ENV === "prod" ? "prod" : "dev"),
    canonicalRepo(projectId),
  );
  // Quiet: the outbox drained and every lease let go (the last promotions' follow-up work ends).
  let report = await checkInvariants({
    databaseUrl: stack.databaseUrl,
    projectId,
    changeIds,
    canonicalRepoDir: repoDir,
  });
  const settleEnd = Date.now() + 120_000;
  while (!report.ok && Date.now() < settleEnd) {
    await sleep(2_000);
    report = await checkInvariants({ databaseUrl: stack.databaseUrl, projectId, changeIds, canonicalRepoDir: repoDir });
  }
  const result = {
    bench: "chaos",
    seed: SEED,
    ok: report.ok,
    seconds: elapsed(),
    changes: changeIds.length,
    kills: killed.length,
    killsByProcess: {
      worker: killed.filter((k) => k.process === "worker").length,
      web: killed.filter((k) => k.process === "web").length,
    },
    postgresRestartedAtSeconds: pgRestartedAt,
    longestStallSeconds: stalls.length ? Math.round(Math.max(...stalls) / 100) / 10 : null,
    stallsMeasured: stalls.length,
    invariants: Object.fromEntries(report.invariants.map((i) => [i.name, i.ok ? "ok" : i.found])),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return report.ok ? 0 : 1;
}

/** Signs the seeded demo admin in and makes an admin API token for the trial. */
async function adminToken(stack: Stack): Promise<string> {
  const origin = stack.url;
  const res = await fetch(`${origin}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin },
    body: JSON.stringify({ email: stack.demo.email, password: stack.demo.password }),
  });
  if (!res.ok) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const tokenRes = await fetch(`${origin}/api/trpc/tokens.create`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie, origin },
    body: JSON.stringify({ json: { tenantId: "ten_demo", name: `chaos-${SEED}`, role: "admin" } }),
  });
  const body = (await tokenRes.json()) as { result?: { data?: { json?: { secret?: string } } } };
  const secret = body.result?.data?.json?.secret;
  if (!secret) throw new Error(`tokens.create failed: ${JSON.stringify(body)}`);
  return secret;
}

/** Retries a call while web is down or restarting (the same input each time: the calls are idempotent). */
async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const end = Date.now() + 180_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > end) throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      await sleep(1_000);
    }
  }
}

async function until<T>(what: string, probe: () => Promise<T | false>, limitMs = 300_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe().catch(() => false as const);
    if (v !== false) return v;
    if (Date.now() > end) throw new Error(`chaos: waited ${Math.round(limitMs / 1000)} s for ${what}`);
    await sleep(250);
  }
}

/** One query on a short-lived connection (Postgres may restart between two). */
async function query<R extends pg.QueryResultRow>(stack: Stack, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: stack.databaseUrl });
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

async function latestEventAt(stack: Stack): Promise<number> {
  const r = await query<{ at: Date | null }>(stack, "SELECT max(created_at) AS at FROM outbox").catch(() => []);
  return r[0]?.at?.getTime() ?? 0;
}

/** Milliseconds from the kill to the first Event written after it, or null when nothing was left to do. */
async function measureStall(
  stack: Stack,
  changeIds: string[],
  killedAt: number,
  before: number,
): Promise<number | null> {
  const end = killedAt + 600_000;
  while (Date.now() < end) {
    const r = await query<{ at: Date | null; open: string }>(
      stack,
      `SELECT (SELECT min(created_at) FROM outbox WHERE created_at > $1) AS at,
              (SELECT count(*) FROM changes WHERE id = ANY($2::text[]) AND status <> 'promoted') AS open`,
      [new Date(Math.max(before, killedAt - 1)), changeIds],
    ).catch(() => null);
    if (r?.[0]?.at) return Math.max(0, r[0].at.getTime() - killedAt);
    if (r && Number(r[0]?.open) === 0) return null;
    await sleep(250);
  }
  return 600_000;
}

/**
 * Restarts the embedded Postgres underneath the running product, as an operator's `pg_ctl restart`
 * would: every connection drops, the server comes back on the same port with a new postmaster.
 */
/**
 * Stops the embedded Postgres under the running product (SIGINT to its server process: a fast
 * shutdown, every connection cut) and waits until the stack's watch of it has started it again.
 */
async function stopPostgresUnderneath(dataDir: string): Promise<[number, number]> {
  const pgData = join(dataDir, "postgres");
  const before = runningPostmaster(pgData);
  if (before === null) throw new Error(`chaos: no Postgres serves ${pgData}`);
  process.kill(before, "SIGINT");
  const after = await until("the embedded Postgres started again", async () => {
    const pid = runningPostmaster(pgData);
    return pid !== null && pid !== before ? pid : false;
  });
  return [before, after];
}

main()
  .then((code) => process.exit(code))
  .catch((err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  });
