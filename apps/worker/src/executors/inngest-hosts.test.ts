import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, scriptedProvider } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFunctions } from "../functions/index.ts";
import { INNGEST_APP_ID, INNGEST_PATH } from "./inngest.ts";
import { type Balancer, type StandInInngest, startBalancer, startStandInInngest } from "./inngest-stand-in.testing.ts";

/**
 * Several worker hosts serve the worker functions as one Inngest app behind one URL
 * (docs/configuration.md, Several worker hosts): a balancer in front, one app ID, one sync. Each host
 * here is a process of its own (inngest-host.testing.ts) running the Inngest executor on the test
 * database, so nothing can pass between them but Inngest's requests and Postgres. The stand-in
 * (inngest-stand-in.testing.ts) plays Inngest: it takes the syncs and drives runs through the
 * balancer, which sends each request to the next host in turn.
 */
const t = useTestDatabase();
const SIGNING_KEY = `signkey-test-${"cd".repeat(32)}`;
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const hostScript = fileURLToPath(new URL("./inngest-host.testing.ts", import.meta.url));
const HEARTBEAT_NUDGE = { name: "rhumbatron/nudge.heartbeat", data: { key: "proj_1" } };

interface Host {
  url: string;
  workerId: string;
  stop(): Promise<void>;
}

const children: ChildProcess[] = [];
const dataDirs: string[] = [];
let inngest: StandInInngest;
let balancer: Balancer;
let hostA: Host;
let hostB: Host;

/** A worker host with the settings every host shares, its own data folder, ready once it listens. */
function startHost(): Promise<Host> {
  const dataDir = mkdtempSync(join(tmpdir(), "rh-inngest-host-"));
  dataDirs.push(dataDir);
  const child = spawn(process.execPath, ["--import", "tsx", hostScript], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: t.url,
      RHUMBATRON_EXECUTOR: "inngest",
      RHUMBATRON_DATA_DIR: dataDir,
      RHUMBATRON_AUTH_SECRET: "the-same-secret-on-every-host-of-this-test",
      RHUMBATRON_LOG_LEVEL: "warn",
      INNGEST_SIGNING_KEY: SIGNING_KEY,
      INNGEST_EVENT_KEY: "test-event-key",
      INNGEST_BASE_URL: inngest.url,
      INNGEST_SERVE_ORIGIN: balancer.url,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (c) => {
    stderr += c;
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (c) => {
      stdout += c;
      // The host's one line saying where it listens; its log lines (JSON too) are left alone.
      const ready = /^\{"listening":(\d+),"workerId":"([^"]+)"\}$/m.exec(stdout);
      if (ready)
        resolve({
          url: `http://127.0.0.1:${ready[1]}`,
          workerId: String(ready[2]),
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            expect(await exited).toBe(0);
          },
        });
    });
    void exited.then((code) => reject(new Error(`the host exited (${code}) before listening:\n${stdout}\n${stderr}`)));
  });
}

beforeAll(async () => {
  inngest = await startStandInInngest(SIGNING_KEY);
  balancer = await startBalancer([]);
  [hostA, hostB] = await Promise.all([startHost(), startHost()]);
  balancer.route([hostA.url, hostB.url]);
});

// Registered after useTestDatabase's, so it runs first: the hosts let go of the database before it is dropped.
afterAll(async () => {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    running.map(
      (child) =>
        new Promise((closed) => {
          child.once("close", closed);
          child.kill("SIGTERM");
        }),
    ),
  );
  await balancer?.stop();
  await inngest?.stop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** A sync: a PUT on a serve URL (a host's own, or the balancer's), as `curl -X PUT` or Inngest's deploy sync does. */
async function sync(url: string): Promise<void> {
  const res = await fetch(`${url}${INNGEST_PATH}`, { method: "PUT" });
  expect(res.status, await res.text()).toBe(200);
}

/** Each host's heartbeat count: the heartbeat function's effect, one more per run of its body. */
async function beats(...hosts: Host[]): Promise<number[]> {
  const rows = await t.db.workerHeartbeat.findMany({ where: { workerId: { in: hosts.map((h) => h.workerId) } } });
  return hosts.map((h) => rows.find((r) => r.workerId === h.workerId)?.beats ?? 0);
}

/** The registry's function IDs as Inngest lists them (app ID prefix); only their ids are read here. */
function registryIds(): string[] {
  const functions = buildFunctions({
    config: loadConfig("dev"),
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
  });
  return functions.map((f) => `${INNGEST_APP_ID}-${f.id}`).sort();
}

describe("several worker hosts behind one URL", () => {
  it("sync the same app: one app, the same function IDs and the balancer's URL, whichever host synced last", async () => {
    const before = inngest.registrations.length;
    // Both hosts synced at once, straight on their own ports (as a start script on each might), then through the balancer.
    await Promise.all([sync(hostA.url), sync(hostB.url)]);
    await sync(balancer.url);
    const synced = inngest.registrations.slice(before);
    expect(synced).toHaveLength(3);
    // The three syncs registered exactly the same thing: nothing of the host that answered is in it.
    expect(synced[1]).toEqual(synced[0]);
    expect(synced[2]).toEqual(synced[0]);
    for (const host of [hostA, hostB]) {
      expect(JSON.stringify(synced[0])).not.toContain(host.url);
      expect(JSON.stringify(synced[0])).not.toContain(host.workerId);
    }
    expect([...inngest.apps.keys()]).toEqual([INNGEST_APP_ID]);
    const app = inngest.apps.get(INNGEST_APP_ID);
    expect(app?.url).toBe(`${balancer.url}${INNGEST_PATH}`);
    expect(app?.functions.map((f) => f.id).sort()).toEqual(registryIds());
    for (const fn of app?.functions ?? []) {
      for (const step of Object.values(fn.steps))
        expect(step.runtime.url.startsWith(`${balancer.url}${INNGEST_PATH}?`)).toBe(true);
    }
  });

  it("run a step on host A and finish the run on host B: the body ran once, on A, and B answers with A's result", async () => {
    await sync(balancer.url);
    balancer.route([hostA.url, hostB.url]);
    const [a, b] = await beats(hostA, hostB);
    const run = await inngest.invoke(INNGEST_APP_ID, "heartbeat", HEARTBEAT_NUDGE, { immediate: true });
    expect(balancer.sentTo.slice(-2)).toEqual([hostA.url, hostB.url]);
    expect(run.statuses).toEqual([206, 200]);
    expect(run.output).toMatchObject({ workerId: hostA.workerId, beats: (a ?? 0) + 1 });
    expect(await beats(hostA, hostB)).toEqual([(a ?? 0) + 1, b]);
  });

  it("plan the step on host A, run it on host B, finish on host A: the body ran once, on B", async () => {
    await sync(balancer.url);
    balancer.route([hostA.url, hostB.url]);
    const [a, b] = await beats(hostA, hostB);
    const run = await inngest.invoke(INNGEST_APP_ID, "heartbeat", HEARTBEAT_NUDGE, { immediate: false });
    expect(balancer.sentTo.slice(-3)).toEqual([hostA.url, hostB.url, hostA.url]);
    expect(run.statuses).toEqual([206, 206, 200]);
    expect(run.output).toMatchObject({ workerId: hostB.workerId, beats: (b ?? 0) + 1 });
    expect(await beats(hostA, hostB)).toEqual([a, (b ?? 0) + 1]);
  });

  it("finish a run on host B after the host that ran its step has stopped", async () => {
    const hostC = await startHost();
    await sync(balancer.url);
    balancer.route([hostC.url, hostB.url]);
    const [b] = await beats(hostB);
    // Host C runs the step; it is gone before Inngest sends the run's next request.
    const run = await inngest.invoke(INNGEST_APP_ID, "heartbeat", HEARTBEAT_NUDGE, {
      immediate: true,
      between: () => hostC.stop(),
    });
    expect(balancer.sentTo.slice(-2)).toEqual([hostC.url, hostB.url]);
    expect(run.statuses).toEqual([206, 200]);
    expect(run.output).toMatchObject({ workerId: hostC.workerId, beats: 1 });
    expect(await beats(hostC, hostB)).toEqual([1, b]);
  });
});
