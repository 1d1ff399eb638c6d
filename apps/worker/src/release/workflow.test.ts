import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { releaseId } from "@rhumbatron/core";
import { startWorkflowInstance } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { withTransaction } from "@rhumbatron/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_RUN_KEY, type FunctionContext } from "../functions/types.ts";
import { promotionFixture } from "../source/promotion.testing.ts";
import { captureLogs, manualClock, testIdentity } from "../testing.ts";
import { type ReleaseWorkflowDeps, releaseWorkflowFunction, runReleaseWorkflow } from "./workflow.ts";

const t = useTestDatabase();
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
});

/** A local webhook receiver: answers each POST with `status` (or never, when null) and keeps the bodies. */
async function webhook(status: number | null) {
  const bodies: Record<string, unknown>[] = [];
  const headers: IncomingMessage["headers"][] = [];
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => {
      data += c;
    });
    req.on("end", () => {
      bodies.push(JSON.parse(data) as Record<string, unknown>);
      headers.push(req.headers);
      if (status === null) return;
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "boom");
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, headers };
}

async function setup(releaseTarget?: unknown, extra: Partial<ReleaseWorkflowDeps> = {}) {
  const clock = manualClock("2026-10-02T00:00:00Z");
  const f = await promotionFixture(t.db, { now: clock.now, releaseTarget });
  const releaseRoot = mkdtempSync(join(tmpdir(), "rh-releases-"));
  const { now: _now, ...deps } = f.deps;
  const fn = releaseWorkflowFunction({ ...deps, releaseRoot, ...extra });
  const logs = captureLogs();
  const ctx: FunctionContext = {
    db: t.db,
    config: f.config,
    logger: logs.logger,
    now: clock.now,
    key: DEFAULT_RUN_KEY,
    trigger: "manual",
    worker: testIdentity(),
  };
  const run = async () => (await fn.handler(ctx)) as { releases: { releaseId: string; outcome: string }[] };
  /** What promotion does for a generation with a release target: the release row and its instance. */
  const release = async (generation: number) => {
    const g = await t.db.canonicalGeneration.findUniqueOrThrow({
      where: { projectId_generation: { projectId: f.projectId, generation } },
    });
    const project = await t.db.project.findUniqueOrThrow({ where: { id: f.projectId } });
    const id = releaseId(f.projectId, generation);
    await withTransaction(t.db, async (ctx) => {
      await ctx.tx.release.create({
        data: {
          id,
          projectId: f.projectId,
          generation,
          candidateId: g.candidateId,
          commit: g.commit,
          tree: g.tree,
          target: project.releaseTarget as object,
        },
      });
      await startWorkflowInstance(
        ctx,
        { kind: "release", instanceId: id, input: { releaseId: id, projectId: f.projectId }, startedBy: "test" },
        { config: f.config, nudger: f.deps.nudger, now: clock.now },
      );
    });
    return id;
  };
  const events = async (type: string) =>
    (await t.db.outboxRow.findMany({ where: { projectId: f.projectId, eventType: type } })).map(
      (r) => (r.envelope as { payload: unknown }).payload,
    );
  const state = async (id: string) => ({
    release: await t.db.release.findUniqueOrThrow({ where: { id } }),
    instance: await t.db.workflowInstance.findUniqueOrThrow({ where: { instanceId: id } }),
  });
  return { f, clock, releaseRoot, run, release, events, state, fn };
}

function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)));
    }
  };
  walk(dir);
  return out.sort();
}

const stepNames = (steps: unknown) => (steps as { step: string; status: string }[]).map((s) => `${s.step}:${s.status}`);

describe("the release workflow", () => {
  it("exports a promoted generation to the default folder once; a repeat run does nothing new", async () => {
    const { f, releaseRoot, run, release, events, state, fn } = await setup();
    expect(fn.id).toBe("release-workflow");
    expect(fn.triggers.nudge).toBe("workflow_release");
    const s1 = await f.promote({
      "src/cart.ts": "export const cart = 1;\n",
      "src/ui/list.ts": "export const l = 1;\n",
    });
    const id = await release(1);

    expect((await run()).releases).toEqual([{ releaseId: id, outcome: "succeeded", error: null }]);
    const dest = join(releaseRoot, f.projectId, "1");
    // The folder holds exactly the tree's files with their contents.
    const token = await f.token(f.projectId, "read");
    const files = await f.store.files(f.projectId, token, s1.commit);
    expect(listTree(dest)).toEqual(files.map((x) => x.path).sort());
    for (const x of files) {
      expect(new Uint8Array(readFileSync(join(dest, x.path)))).toEqual(
        await f.store.readBlob(f.projectId, token, x.oid),
      );
    }
    expect(readdirSync(join(releaseRoot, f.projectId))).toEqual(["1"]);
    // The source sync ran as a step: canonical main is at the released commit.
    expect(await f.store.head(f.projectId, token)).toBe(s1.commit);

    const { release: rel, instance } = await state(id);
    expect(rel).toMatchObject({ status: "succeeded", error: null });
    expect(rel.output).toMatchObject({ sync: "advanced", delivered: { kind: "folder", path: dest, files: 4 } });
    expect(stepNames(rel.steps)).toEqual([
      "load:succeeded",
      "started:succeeded",
      "sync:succeeded",
      "deliver:succeeded",
      "complete:succeeded",
    ]);
    for (const s of rel.steps as { startedAt: string; finishedAt: string }[]) {
      expect(Date.parse(s.finishedAt)).toBeGreaterThanOrEqual(Date.parse(s.startedAt));
    }
    expect(instance).toMatchObject({ status: "succeeded", leasedUntil: null });
    expect(await events("release.started")).toEqual([{ releaseId: id, generation: 1 }]);
    expect(await events("release.completed")).toEqual([{ releaseId: id, outcome: "succeeded" }]);

    // Another tick finds nothing to run, and a replay of the finished instance changes nothing.
    expect((await run()).releases).toEqual([]);
    const { now: _n, ...deps } = f.deps;
    await runReleaseWorkflow({ ...deps, now: f.deps.now, releaseRoot }, { instanceId: id, input: {}, attempts: 2 });
    expect((await state(id)).release.steps).toEqual(rel.steps);
    expect(await events("release.completed")).toHaveLength(1);
    expect(await events("release.started")).toHaveLength(1);
  });

  it("a folder target with a path, for a generation two ahead of canonical main", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rh-target-")), "site");
    const { f, run, release, state } = await setup({ kind: "folder", path });
    await f.promote({ "a.txt": "a\n" });
    const s2 = await f.promote({ "b.txt": "b\n", "README.md": null });
    const id = await release(2);
    expect((await run()).releases).toEqual([{ releaseId: id, outcome: "succeeded", error: null }]);
    expect(listTree(path)).toEqual(["a.txt", "b.txt", "src/cart.ts", "src/wishlist.ts"]);
    expect(readFileSync(join(path, "b.txt"), "utf8")).toBe("b\n");
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s2.commit);
    expect((await state(id)).release.output).toMatchObject({ delivered: { kind: "folder", path, files: 4 } });
  });

  it("posts the release to a webhook target", async () => {
    const hook = await webhook(200);
    const { f, run, release, state, events } = await setup({ kind: "webhook", url: hook.url });
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const id = await release(1);
    expect((await run()).releases).toEqual([{ releaseId: id, outcome: "succeeded", error: null }]);
    const files = await f.store.files(f.projectId, await f.token(f.projectId, "read"), s1.commit);
    expect(hook.bodies).toEqual([
      {
        releaseId: id,
        projectId: f.projectId,
        generation: 1,
        commit: s1.commit,
        tree: s1.tree,
        files: files.map((x) => ({ path: x.path, blob: x.oid, size: x.size, executable: x.executable })),
      },
    ]);
    expect(hook.headers[0]?.["idempotency-key"]).toBe(id);
    expect((await state(id)).release).toMatchObject({
      status: "succeeded",
      output: { delivered: { kind: "webhook", url: hook.url, status: 200, files: 3 } },
    });
    expect(await events("release.completed")).toEqual([{ releaseId: id, outcome: "succeeded" }]);
  });

  it("retries a failing webhook after the delay, then fails the release with the error", async () => {
    const hook = await webhook(500);
    const { f, clock, run, release, state, events } = await setup({ kind: "webhook", url: hook.url });
    await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const id = await release(1);
    const retries = f.config.queues.policies.release.maxRetries;
    const delayMs = f.config.queues.policies.release.retryDelaySeconds * 1000;

    for (let attempt = 1; attempt <= retries; attempt++) {
      expect((await run()).releases).toEqual([
        expect.objectContaining({
          releaseId: id,
          outcome: "retrying",
          error: `webhook ${hook.url} answered 500: boom`,
        }),
      ]);
      expect((await state(id)).release).toMatchObject({ status: "running", error: expect.stringContaining("500") });
      // Not before the retry delay has passed.
      expect((await run()).releases).toEqual([]);
      clock.set(new Date(clock.now().getTime() + delayMs + 1000).toISOString());
    }
    expect((await run()).releases).toEqual([
      { releaseId: id, outcome: "failed", error: `webhook ${hook.url} answered 500: boom` },
    ]);
    expect(hook.bodies).toHaveLength(retries + 1);
    const { release: rel, instance } = await state(id);
    expect(rel).toMatchObject({ status: "failed", error: `webhook ${hook.url} answered 500: boom` });
    expect(stepNames(rel.steps)).toEqual([
      "load:succeeded",
      "started:succeeded",
      "sync:succeeded",
      ...Array.from({ length: retries + 1 }, () => "attempt:failed"),
      "complete:succeeded",
    ]);
    expect(instance).toMatchObject({ status: "failed", error: `webhook ${hook.url} answered 500: boom` });
    expect(await events("release.completed")).toEqual([{ releaseId: id, outcome: "failed" }]);
    clock.set(new Date(clock.now().getTime() + delayMs * 10).toISOString());
    expect((await run()).releases).toEqual([]);
    expect(hook.bodies).toHaveLength(retries + 1);
  });

  it("an instance whose runs kept crashing (its lease lapsing) fails after the retries", async () => {
    const { f, run, release, state, events } = await setup();
    await f.promote({ "a.txt": "a\n" });
    const id = await release(1);
    const retries = f.config.queues.policies.release.maxRetries;
    await t.db.workflowInstance.update({ where: { instanceId: id }, data: { attempts: retries + 1 } });
    expect((await run()).releases).toEqual([
      { releaseId: id, outcome: "failed", error: `stopped after ${retries + 1} attempts` },
    ]);
    expect((await state(id)).release.status).toBe("failed");
    expect(await events("release.completed")).toEqual([{ releaseId: id, outcome: "failed" }]);
  });

  it("a webhook that does not answer in time counts as a failure", async () => {
    const hook = await webhook(null);
    const { f, run, release, state } = await setup(
      { kind: "webhook", url: hook.url },
      { webhookTimeoutMs: 300, retries: 0 },
    );
    await f.promote({ "a.txt": "a\n" });
    const id = await release(1);
    expect((await run()).releases).toEqual([
      { releaseId: id, outcome: "failed", error: `webhook ${hook.url} did not answer within 300 ms` },
    ]);
    expect((await state(id)).release.status).toBe("failed");
  });
});
