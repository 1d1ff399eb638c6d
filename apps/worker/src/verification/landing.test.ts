import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  canonicalRepo,
  commandIds,
  defaultPolicyDocument,
  humanGateApplies,
  loadConfig,
  policyFromDocument,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  type Db,
  decideCandidateApproval,
  listLandingQueue,
  localFolderBlobStore,
  setLandingPriority,
  setLandingQueue,
  setLandWhenReady,
  withRepoToken,
} from "@rhumbatron/db";
import { seedVerifiedCandidate, useTestDatabase } from "@rhumbatron/db/testing";
import {
  consumeQueue,
  enqueueCommand,
  pgNotifyNudger,
  type QueueRunResult,
  withTransaction,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { commandHandlers } from "../functions/queue-consumers.ts";
import { SourceStore } from "../source/store.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  createScriptedChange,
  explainOnFailure,
  fastChecksPolicy,
  WHOLE_WORKER_LIMIT as LIMIT,
  oneFileChange,
  policyOnlyChecks,
  provisionedProject,
  startFullWorker,
  type TestWorld,
  testWorld,
  waitForPromoted,
  waitUntil,
  wholeWorkerWithProject,
} from "../test-world.ts";
import { landHandler } from "./landing.ts";

/**
 * The landing queue on the whole worker (real Postgres, git repositories, Sandbox and the template's
 * own checks): Changes that land when ready are promoted with no human action, one at a time, and a
 * Candidate made stale by another promotion recomposes itself and lands too.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

/** A one-Task Change that writes `path`. */
function create(w: TestWorld, projectId: string, requestId: string, path: string, content: string, land: boolean) {
  return oneFileChange(w, projectId, { requestId, title: `Add ${path}`, path, content, landWhenReady: land });
}

/**
 * The files of canonical main once source sync has fast-forwarded it to the newest generation (it
 * follows the promotion on the indexing queue), read through a read token as every git access is.
 */
async function mainFiles(w: TestWorld, projectId: string): Promise<Map<string, string>> {
  const repo = canonicalRepo(projectId);
  const read = <T>(fn: (token: string) => Promise<T>) =>
    withRepoToken(t.db, { repo, mode: "read", purpose: "test" }, w.config, w.deps.now, fn);
  const project = await t.db.project.findUniqueOrThrow({ where: { id: projectId } });
  const newest = await t.db.canonicalGeneration.findUniqueOrThrow({
    where: { projectId_generation: { projectId, generation: project.canonicalGeneration } },
  });
  await waitUntil(
    "main fast-forwarded",
    () => read((token) => w.store.head(repo, token)),
    (h) => h === newest.commit,
    LIMIT,
  );
  return read(async (token) => {
    const head = await w.store.head(repo, token);
    const out = new Map<string, string>();
    for (const f of await w.store.files(repo, token, head)) {
      out.set(f.path, new TextDecoder().decode(await w.store.readBlob(repo, token, f.oid)));
    }
    return out;
  });
}

describe("the landing queue", () => {
  it(
    "lands three Changes created at the same moment, one at a time, with no human action",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const ids = await Promise.all(
        ["one", "two", "three"].map((n) =>
          create(w, projectId, `land-${n}`, `src/land-${n}.ts`, `export const ${n} = "${n}";\n`, true),
        ),
      );
      const queue = await listLandingQueue(t.db, { tenantId: "ten_a", projectId });
      expect(queue.map((e) => e.position)).toEqual([1, 2, 3]);
      expect(new Set(queue.map((e) => e.changeId))).toEqual(new Set(ids));

      await waitForPromoted(w, ids, "all three promoted");
      const files = await mainFiles(w, projectId);
      for (const n of ["one", "two", "three"])
        expect(files.get(`src/land-${n}.ts`)).toBe(`export const ${n} = "${n}";\n`);
      // Three promotions, one generation each, every one by the landing queue.
      const project = await t.db.project.findUniqueOrThrow({ where: { id: projectId } });
      expect(project.canonicalGeneration).toBe(3);
      const promoted = await t.db.candidate.findMany({ where: { projectId, status: "promoted" } });
      expect(promoted.map((c) => c.promotedGeneration).sort()).toEqual([1, 2, 3]);
      const advanced = await t.db.outboxRow.findMany({ where: { projectId, eventType: "canonical.advanced" } });
      expect(advanced.map((r) => (r.envelope as { actor: { id: string } }).actor.id)).toEqual([
        "landing-queue",
        "landing-queue",
        "landing-queue",
      ]);
      expect(await listLandingQueue(t.db, { tenantId: "ten_a", projectId })).toEqual([]);
      // The list and each Change's own read are not one snapshot: a read that meets a promotion
      // half-way (the Change still verifying, its Candidate promoted) must not list a landed Change.
      await t.db.change.update({ where: { id: ids[0] }, data: { status: "verifying" } });
      expect(await listLandingQueue(t.db, { tenantId: "ten_a", projectId })).toEqual([]);
    },
    LIMIT,
  );

  it(
    "Changes that each add a line at the same place of a file everyone appends to all land, every line kept, with no human action",
    async () => {
      const w = await testWorld(t.db);
      const projectId = await provisionedProject(w);
      explainOnFailure(w, projectId);
      const checks = policyOnlyChecks();
      const projectChecks = { ...checks, file: { ...checks.file, appendOnly: ["CHANGELOG.md"] } };
      running.push(await startFullWorker(w, t.url, { policy: fastChecksPolicy(), projectChecks }));
      await waitForPromoted(w, [await create(w, projectId, "log-start", "CHANGELOG.md", "# Changes\n", true)]);
      const names = ["one", "two", "three", "four"];
      const ids = await Promise.all(
        names.map((n) =>
          createScriptedChange(w, projectId, {
            requestId: `log-${n}`,
            title: `Note ${n} in the changelog`,
            tasks: [
              {
                key: "a",
                paths: ["CHANGELOG.md"],
                editPlan: [
                  { op: "replace", path: "CHANGELOG.md", find: "# Changes\n", replace: `# Changes\n- ${n}\n` },
                ],
              },
            ],
            landWhenReady: true,
          }),
        ),
      );
      await waitForPromoted(w, ids, "every changelog Change promoted");
      const log = (await mainFiles(w, projectId)).get("CHANGELOG.md") ?? "";
      // Every entry once, under the heading. Where each sits follows where its Agent put it: entries
      // made on the same base are kept in queue order, and one made after a promotion went right
      // under the heading (above those already landed), as its edit says.
      const [heading, ...entries] = log.split("\n").filter((l) => l !== "");
      expect(heading).toBe("# Changes");
      expect([...entries].sort()).toEqual(names.map((n) => `- ${n}`).sort());
      const advanced = await t.db.outboxRow.findMany({ where: { projectId, eventType: "canonical.advanced" } });
      expect(advanced.map((r) => (r.envelope as { actor: { id: string } }).actor.id)).toEqual(
        Array(5).fill("landing-queue"),
      );
      expect(await t.db.candidate.count({ where: { changeId: { in: ids }, rejectionReason: { not: null } } })).toBe(0);
    },
    LIMIT,
  );

  it(
    "a paused queue lands nothing, however ready; resumed, it lands what waited, by itself",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const admin = { tenantId: "ten_a", projectId, actorId: "usr_admin" };
      expect(await setLandingQueue(t.db, { ...admin, state: "paused" }, w.deps)).toMatchObject({
        changed: true,
        previous: "running",
      });
      const id = await create(w, projectId, "paused-one", "src/paused.ts", "export const paused = 1;\n", true);
      const held = await waitUntil(
        "the Change verified and held by the paused queue",
        () => listLandingQueue(t.db, { tenantId: "ten_a", projectId }),
        (q) => q[0]?.waitingFor === "paused",
        LIMIT,
      );
      expect(held[0]).toMatchObject({ changeId: id, ready: false });
      expect((await t.db.change.findUniqueOrThrow({ where: { id } })).status).not.toBe("promoted");
      const resumed = await setLandingQueue(t.db, { ...admin, state: "running" }, w.deps);
      expect(resumed).toMatchObject({ changed: true, previous: "paused", landing: [id] });
      await waitForPromoted(w, [id]);
      const changed = await t.db.outboxRow.findMany({ where: { projectId, eventType: "landing.queue_changed" } });
      expect(changed).toHaveLength(2);
    },
    LIMIT,
  );

  it(
    "a Change moved to the front lands first: two wait ready behind a paused queue, the later one is moved ahead, and resumed it lands first",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const admin = { tenantId: "ten_a", actorId: "usr_admin" };
      await setLandingQueue(t.db, { ...admin, projectId, state: "paused" }, w.deps);
      const one = await create(w, projectId, "front-one", "src/front-one.ts", "export const one = 1;\n", true);
      const two = await create(w, projectId, "front-two", "src/front-two.ts", "export const two = 2;\n", true);
      // Whichever Agent finished first was composed on canonical (their runs go side by side); the
      // other is verified on top of it (a speculative stack), so it waits for it.
      const stacked = await waitUntil(
        "one verified and held by the paused queue, the other verified on it",
        () => listLandingQueue(t.db, { tenantId: "ten_a", projectId }),
        (q) =>
          q.length === 2 &&
          q.some((e) => e.waitingFor === "paused" && e.stackedOn === null) &&
          q.some((e) => e.waitingFor === "stack" && e.stackedOn !== null),
        LIMIT,
      );
      const second = stacked.find((e) => e.waitingFor === "stack")?.changeId ?? "";
      const first = second === one ? two : one;
      expect(stacked.find((e) => e.changeId === second)?.stackedOn?.changeId).toBe(first);
      // A Change not in the queue has no place in it: refused, nothing written.
      const outside = await createScriptedChange(w, projectId, {
        requestId: "front-outside",
        title: "Not landing",
        tasks: [{ key: "a", paths: ["src/x.ts"], editPlan: [{ op: "write", path: "src/x.ts", content: "x\n" }] }],
      });
      await expect(
        setLandingPriority(t.db, { ...admin, changeId: outside, priority: "front" }, w.deps),
      ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
      expect(await setLandingPriority(t.db, { ...admin, changeId: second, priority: "front" }, w.deps)).toEqual({
        priority: 1,
        previous: 0,
        changed: true,
      });
      // At the front already: the same again changes nothing.
      expect(await setLandingPriority(t.db, { ...admin, changeId: second, priority: "front" }, w.deps)).toMatchObject({
        changed: false,
      });
      const queue = await listLandingQueue(t.db, { tenantId: "ten_a", projectId });
      expect(queue.map((e) => [e.changeId, e.priority])).toEqual([
        [second, 1],
        [first, 0],
      ]);
      // Ahead of the one it was stacked on now: composed again on canonical, and held like the first.
      await waitUntil(
        "the second verified again on canonical",
        () => listLandingQueue(t.db, { tenantId: "ten_a", projectId }),
        (q) => q.length === 2 && q.every((e) => e.waitingFor === "paused" && e.stackedOn === null),
        LIMIT,
      );
      await setLandingQueue(t.db, { ...admin, projectId, state: "running" }, w.deps);
      await waitForPromoted(w, [first, second]);
      const promoted = await t.db.candidate.findMany({
        where: { projectId, status: "promoted" },
        orderBy: { promotedGeneration: "asc" },
        select: { changeId: true },
      });
      expect(promoted.map((c) => c.changeId)).toEqual([second, first]);
      expect(await t.db.outboxRow.count({ where: { projectId, eventType: "landing.priority_changed" } })).toBe(1);
    },
    LIMIT,
  );

  it(
    "two Changes that edit the same line both land: the one that conflicts with what landed first re-runs its Task by itself on the new base",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const path = "src/label.ts";
      const seed = await create(w, projectId, "repair-seed", path, "export const label = 'x';\n", true);
      await waitForPromoted(w, [seed]);
      // Both edit the one line; each edit applies as well on the other's result.
      const edit = (requestId: string, find: string, replace: string) =>
        createScriptedChange(w, projectId, {
          requestId,
          title: requestId,
          landWhenReady: true,
          tasks: [{ key: "a", paths: [path], editPlan: [{ op: "replace", path, find, replace }] }],
        });
      const [reviewed, renamed] = await Promise.all([
        edit("repair-reviewed", "';\n", "'; // reviewed\n"),
        edit("repair-renamed", "= '", "= 'B-"),
      ]);
      await waitForPromoted(w, [reviewed, renamed]);
      expect((await mainFiles(w, projectId)).get(path)).toBe("export const label = 'B-x'; // reviewed\n");
      // Exactly one of them conflicted and was repaired, by the system, once.
      const changes = await t.db.change.findMany({ where: { id: { in: [reviewed, renamed] } } });
      expect(changes.map((c) => c.conflictRepairs).sort()).toEqual([0, 1]);
      const retried = await t.db.outboxRow.findMany({ where: { projectId, eventType: "task.retried" } });
      expect(retried.map((r) => (r.envelope as { actor: { id: string } }).actor.id)).toEqual(["conflict-repair"]);
      const conflicted = await t.db.candidate.count({
        where: { changeId: { in: [reviewed, renamed] }, rejectionReason: "merge conflict" },
      });
      expect(conflicted).toBe(1);
      // The repair's Agent was told the conflict: the file, the base, what landed and its own version.
      const repaired = changes.find((c) => c.conflictRepairs === 1);
      const run = await t.db.agentRun.findFirstOrThrow({
        where: { changeId: repaired?.id ?? "" },
        orderBy: { createdAt: "desc" },
      });
      const packet = await t.db.contextPacket.findUniqueOrThrow({ where: { runId: run.id } });
      expect(packet.note).toContain("conflicted with what landed first");
      expect(packet.note).toContain(`${path}: both changed the same lines`);
      expect(packet.note).toContain("--- base (what the Task started from) ---\nexport const label = 'x';\n");
      expect(packet.note).toMatch(
        /--- landed \(in this checkout now\) ---\nexport const label = '(B-x'|x'; \/\/ reviewed)/,
      );
      expect(packet.note).toContain("--- the Task's own last version ---");
    },
    LIMIT,
  );

  it(
    "lands a diamond Change (a -> b, a -> c, {b, c} -> d): the join starts from the composition of its dependencies",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const write = (key: string, dependsOn: string[], path: string, content: string) => ({
        key,
        dependsOn,
        paths: [path],
        editPlan: [{ op: "write" as const, path, content }],
      });
      const changeId = await createScriptedChange(w, projectId, {
        requestId: "diamond",
        title: "A diamond",
        landWhenReady: true,
        tasks: [
          write("a", [], "src/d-a.ts", "export const a = 1;\n"),
          write("b", ["a"], "src/d-b.ts", "export const b = 2;\n"),
          write("c", ["a"], "src/d-c.ts", "export const c = 3;\n"),
          // d writes what b and c wrote: it must start from both.
          {
            key: "d",
            dependsOn: ["b", "c"],
            paths: ["src/d-d.ts"],
            editPlan: [
              {
                op: "run",
                argv: [
                  "node",
                  "-e",
                  "const fs=require('fs');fs.writeFileSync('src/d-d.ts',fs.readFileSync('src/d-b.ts','utf8')+fs.readFileSync('src/d-c.ts','utf8'))",
                ],
              },
            ],
          },
        ],
      });
      await waitForPromoted(w, [changeId], "the diamond promoted");
      const files = await mainFiles(w, projectId);
      expect(["a", "b", "c", "d"].map((k) => files.get(`src/d-${k}.ts`))).toEqual([
        "export const a = 1;\n",
        "export const b = 2;\n",
        "export const c = 3;\n",
        // Written by d from what b and c wrote: d started from both.
        "export const b = 2;\nexport const c = 3;\n",
      ]);
    },
    LIMIT,
  );

  it(
    "recomposes a Candidate made stale by another promotion, keeps it verified on the new base, and lands it when asked",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const waiting = await create(w, projectId, "stale-b", "src/b.ts", "export const b = 2;\n", false);
      const first = await waitUntil(
        "the waiting Change verified on S0",
        () => t.db.candidate.findFirst({ where: { changeId: waiting, status: "verified" } }),
        (c) => c !== null,
        LIMIT,
      );
      expect(first?.baseGeneration).toBe(0);

      const lander = await create(w, projectId, "stale-a", "src/a.ts", "export const a = 1;\n", true);
      await waitForPromoted(w, [lander], "the other Change promoted");
      const again = await waitUntil(
        "the waiting Change recomposed and verified on S1",
        () => t.db.candidate.findFirst({ where: { changeId: waiting, baseGeneration: 1 } }),
        (c) => c?.status === "verified",
        LIMIT,
      );
      expect(again).toMatchObject({
        recomposedFrom: first?.id,
        recomposeReason: `recomposed on generation 1 after ${lander} was promoted`,
      });
      expect((await t.db.candidate.findUniqueOrThrow({ where: { id: first?.id ?? "" } })).status).toBe("stale");

      const on = await setLandWhenReady(
        t.db,
        { tenantId: "ten_a", changeId: waiting, on: true, actorId: "usr_lander" },
        w.deps,
      );
      expect(on).toMatchObject({ landWhenReady: true, changed: true, state: { ready: true, waitingFor: "landing" } });
      await waitForPromoted(w, [waiting], "the recomposed Change promoted");
      const files = await mainFiles(w, projectId);
      expect(files.get("src/a.ts")).toBe("export const a = 1;\n");
      expect(files.get("src/b.ts")).toBe("export const b = 2;\n");
    },
    LIMIT,
  );
});

/**
 * What the landing queue must NOT promote, on the real integration consumer and landing handler
 * against Postgres: a land-when-ready Change whose verified Candidate still waits for its approval,
 * and one whose Candidate an approver rejected. Each is asked by a `candidate.land` command (the one
 * the causal router sends on candidate.verified), and the pass is driven until the queue is empty:
 * both commands were delivered and acked, so the landing step provably ran over both Candidates
 * before anything is asserted. The Candidates are otherwise promotable (every planned check passes
 * on their base, and the fork is taken to hold the composed commit): the approval is the only thing
 * holding them, as the last step shows by approving one and landing it.
 */
describe("the landing queue and approvals", () => {
  // A database of its own: the pass drains the whole integration queue, and only these commands may be on it.
  const own = useTestDatabase();
  const config = loadConfig("dev");
  const TENANT = "ten_land";
  const policy = policyFromDocument(defaultPolicyDocument(config), 1);
  const deps = { config, nudger: pgNotifyNudger, now: () => new Date() };

  /** The one outside question landing asks (the composed commit must be in the Candidate fork; core promotion.ts), answered yes for every Candidate. */
  class EveryCommitInFork extends SourceStore {
    override async hasCommit(): Promise<boolean> {
      return true;
    }
  }

  function landingDeps(db: Db) {
    const dir = mkdtempSync(join(tmpdir(), "rh-landing-"));
    const now = () => new Date();
    const source = new EveryCommitInFork({ db, config, now, root: join(dir, "git") });
    return { db, config, nudger: pgNotifyNudger, now, source, blobs: localFolderBlobStore(join(dir, "blobs")) };
  }

  /**
   * A high-risk Change that lands when ready, on generation 0, with a verified Candidate: every
   * check of its plan passed on the composed tree, and the project's policy gates high risk behind
   * a person's approval, which nobody has given yet.
   */
  async function verifiedAwaitingApproval(db: Db, projectId: string) {
    const { changeId, candidateId } = await seedVerifiedCandidate(db, projectId, config, {
      riskTier: "high",
      tenantId: TENANT,
      candidateId: `cand_${randomUUID().replaceAll("-", "")}`,
      paths: ["src/x.ts"],
      approvalRequired: true,
      change: { title: "Gated by an approval", landWhenReady: true, landingSince: new Date() },
    });
    await db.task.create({
      data: {
        id: `task_${projectId}`,
        changeId,
        key: "a",
        title: "a",
        state: "completed",
        agentId: `agt_${projectId}`,
      },
    });
    const candidate = await db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    expect(humanGateApplies(candidate.plan as unknown as VerificationPlan, policy)).toBe(true);
    return { changeId, candidateId };
  }

  /** The command the causal router sends when a Candidate is verified (or approved). */
  function askToLand(db: Db, projectId: string, c: { changeId: string; candidateId: string }, why: string) {
    const commandId = commandIds.land(c.candidateId, why);
    return withTransaction(db, async (ctx) => {
      await enqueueCommand(
        ctx,
        {
          commandId,
          commandType: "candidate.land",
          projectId,
          changeId: c.changeId,
          payload: { candidateId: c.candidateId, causeEventId: `evt_${why}_${c.candidateId}` },
        },
        deps,
      );
      return commandId;
    });
  }

  /**
   * One landing pass: the integration queue's consumer with the worker's handlers (the landing
   * handler among them), run until it leases nothing. Returns every delivery's outcome.
   */
  async function landingPass(db: Db): Promise<QueueRunResult["actions"]> {
    const worker = { ...landingDeps(db), owner: "landing-test" };
    const handlers = commandHandlers(worker, { integration: [landHandler(worker)] }).integration;
    const total: Record<string, number> = {};
    for (;;) {
      const r = await consumeQueue(db, "integration", handlers, worker);
      if (r.leased === 0) return total as QueueRunResult["actions"];
      for (const [action, n] of Object.entries(r.actions)) total[action] = (total[action] ?? 0) + n;
    }
  }

  /** Everything a promotion (or an attempt at one) writes for a project. */
  async function promotionTrace(db: Db, projectId: string) {
    const project = await db.project.findUniqueOrThrow({ where: { id: projectId } });
    const events = await db.outboxRow.findMany({ where: { projectId }, orderBy: { id: "asc" } });
    return {
      canonicalGeneration: project.canonicalGeneration,
      generations: await db.canonicalGeneration.count({ where: { projectId } }),
      candidates: (await db.candidate.findMany({ where: { projectId }, orderBy: { id: "asc" } })).map((c) => [
        c.id,
        c.status,
        c.promotedGeneration,
      ]),
      events: events.map((e) => e.eventType),
    };
  }

  it("holds a Candidate waiting for its approval and one an approver rejected, and lands the first once approved", async () => {
    const waiting = await verifiedAwaitingApproval(own.db, "proj_land_waiting");
    const rejected = await verifiedAwaitingApproval(own.db, "proj_land_rejected");
    // The rejection comes after candidate.verified sent its candidate.land: the command finds it rejected.
    const rejection = await decideCandidateApproval(
      own.db,
      {
        tenantId: TENANT,
        candidateId: rejected.candidateId,
        userId: "usr_approver",
        kind: "rejected",
        treeHash: "t1",
        note: "not this one",
      },
      deps,
    );
    expect(rejection.decision.kind).toBe("rejected");
    const before = {
      waiting: await promotionTrace(own.db, "proj_land_waiting"),
      rejected: await promotionTrace(own.db, "proj_land_rejected"),
    };

    const commands = [
      await askToLand(own.db, "proj_land_waiting", waiting, "verified"),
      await askToLand(own.db, "proj_land_rejected", rejected, "verified"),
    ];
    // Both commands delivered, the landing step run on each and acked: nothing is left to run.
    expect(await landingPass(own.db)).toMatchObject({ ack: 2, retry: 0, redeliver: 0, dead_letter: 0 });
    expect(await own.db.queueMessage.count({ where: { commandId: { in: commands } } })).toBe(0);

    // Neither moved canonical, nor even tried: no canonical.advanced or artifact.promoted, no
    // promotion.blocked either (a Change that is not ready is not for promotion to refuse), no row at all.
    const after = {
      waiting: await promotionTrace(own.db, "proj_land_waiting"),
      rejected: await promotionTrace(own.db, "proj_land_rejected"),
    };
    expect(after).toEqual(before);
    expect(after.waiting).toEqual({
      canonicalGeneration: 0,
      generations: 1,
      candidates: [[waiting.candidateId, "verified", null]],
      events: [],
    });
    expect(after.rejected).toEqual({
      canonicalGeneration: 0,
      generations: 1,
      candidates: [[rejected.candidateId, "rejected", null]],
      events: ["approval.rejected", "candidate.rejected"],
    });
    // Both stay in the landing queue, each saying what it waits for.
    const queued = async (projectId: string) =>
      (await listLandingQueue(own.db, { tenantId: TENANT, projectId })).map((e) => [e.ready, e.waitingFor]);
    expect(await queued("proj_land_waiting")).toEqual([[false, "approval"]]);
    expect(await queued("proj_land_rejected")).toEqual([[false, "rejected"]]);

    // The same Candidate, once approved for its tree, is promoted by the same pass: only the approval held it.
    await decideCandidateApproval(
      own.db,
      {
        tenantId: TENANT,
        candidateId: waiting.candidateId,
        userId: "usr_approver",
        kind: "granted",
        treeHash: "t1",
      },
      deps,
    );
    await askToLand(own.db, "proj_land_waiting", waiting, "approved");
    expect(await landingPass(own.db)).toMatchObject({ ack: 1 });
    expect(await promotionTrace(own.db, "proj_land_waiting")).toMatchObject({
      canonicalGeneration: 1,
      generations: 2,
      candidates: [[waiting.candidateId, "promoted", 1]],
    });
    expect(await promotionTrace(own.db, "proj_land_rejected")).toEqual(before.rejected);
  });
});
