import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CommandEnvelope, fixtureRecordIds, workspaceFork } from "@rhumbatron/core";
import { requestFixture } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue, putOnQueue, withTransaction } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { createScriptedChange, provisionedProject, runTaskDirectly, type TestWorld, testWorld } from "../test-world.ts";
import { fixtureHandler } from "./fixture.ts";

const t = useTestDatabase();
let w: TestWorld;
let projectId: string;
const FIXER = { id: "usr_fixer", email: "fia@example.test", name: "Fia Fixer" };

beforeAll(async () => {
  w = await testWorld(t.db);
  projectId = await provisionedProject(w);
  await t.db.user.create({ data: FIXER });
});

/** A Change of Tasks a (an Agent writes src/a.txt) and b (depends on a), a completed by the Agent, b ready. */
async function changeWithReadyTask(requestId: string) {
  const changeId = await createScriptedChange(w, projectId, {
    requestId,
    title: `Fixture ${requestId}`,
    tasks: [
      { key: "a", editPlan: [{ op: "write", path: "src/a.txt", content: "from the Agent\n" }] },
      { key: "b", dependsOn: ["a"], editPlan: [] },
    ],
  });
  const [a, b] = await t.db.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
  if (!a || !b) throw new Error("no tasks");
  const { result } = await runTaskDirectly(w, a);
  expect(result.outcome).toBe("completed");
  await t.db.task.update({ where: { id: b.id }, data: { state: "ready" } });
  return { changeId, a, b };
}

const files = [
  { path: "src/fixture.txt", content: "fixed by hand\n" },
  { path: "public/new/page.html", content: "<h1>New</h1>\n" },
  { path: "README.md", delete: true as const },
];

const request = (taskId: string, input = { summary: "Fix it by hand", files }) =>
  requestFixture(w.db, { tenantId: "ten_a", taskId, actorId: FIXER.id, input }, w.deps);
const consume = () => consumeQueue(w.db, "integration", [fixtureHandler(w.deps)], { ...w.deps, owner: "t" });
const queuedEnvelope = async (commandId: string) =>
  (await t.db.queueMessage.findFirstOrThrow({ where: { commandId } })).envelope as CommandEnvelope;

/** Command-line git on a repository of the store. */
const git = (repo: string, ...args: string[]) =>
  execFileSync("git", ["--git-dir", w.store.gitdir(repo), ...args], { encoding: "utf8" }).trim();

describe("fixture.publish", () => {
  it("commits the files on a fork stacked on the Task's dependencies, publishes the ChangeSet and completes the Task", async () => {
    const { changeId, a, b } = await changeWithReadyTask("fx-1");
    const sent = await request(b.id);
    expect((await consume()).actions.ack).toBe(1);

    const cs = await t.db.changeSet.findUniqueOrThrow({ where: { id: sent.changeSetId } });
    expect(cs).toMatchObject({ taskId: b.id, changeId, agentId: FIXER.id });
    expect([...cs.paths].sort()).toEqual(["README.md", "public/new/page.html", "src/fixture.txt"]);
    // What command-line git reads in the fork: the person's commit, on top of a's ChangeSet.
    expect(git(cs.fork, "rev-parse", "main")).toBe(cs.commit);
    expect(git(cs.fork, "log", "-1", "--format=%an <%ae>|%s", cs.commit)).toBe(
      `${FIXER.name} <${FIXER.email}>|b: Fix it by hand`,
    );
    expect(git(cs.fork, "diff", "--name-status", cs.baseCommit, cs.commit).split("\n").sort()).toEqual([
      "A\tpublic/new/page.html",
      "A\tsrc/fixture.txt",
      "D\tREADME.md",
    ]);
    expect(git(cs.fork, "show", `${cs.commit}:src/fixture.txt`)).toBe("fixed by hand");
    expect(git(cs.fork, "show", `${cs.commit}:src/a.txt`)).toBe("from the Agent");
    const aSet = await t.db.changeSet.findFirstOrThrow({ where: { taskId: a.id } });
    expect(git(cs.fork, "show", `${cs.baseCommit}:src/a.txt`)).toBe("from the Agent");
    expect(git(cs.fork, "merge-base", "--is-ancestor", aSet.baseCommit, cs.commit)).toBe("");
    const patch = await w.blobs.get(cs.patchRef ?? "");
    expect(new TextDecoder().decode(patch?.body)).toContain("+fixed by hand");

    // The Task is done as after an Agent: the Change verifies next.
    expect(await t.db.task.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ state: "completed" });
    expect(await t.db.agentRun.findFirstOrThrow({ where: { taskId: b.id } })).toMatchObject({
      reason: "fixture",
      status: "completed",
      fork: cs.fork,
    });
    const events = await t.db.outboxRow.findMany({
      where: { envelope: { path: ["changeId"], equals: changeId } },
      orderBy: { id: "asc" },
    });
    const ofB = events.filter((e) => (e.envelope as { taskId: string | null }).taskId === b.id);
    expect(ofB.map((e) => e.eventType).slice(-2)).toEqual(["changeset.published", "task.completed"]);
    expect((ofB.at(-2)?.envelope as { actor?: unknown } | undefined)?.actor).toEqual({ kind: "user", id: FIXER.id });
    expect(events.at(-1)?.eventType).toBe("verification.started");
    expect(await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).toMatchObject({ status: "verifying" });
  });

  it("a redelivered command publishes no second ChangeSet, also after a crash between its push and its record", async () => {
    const { b } = await changeWithReadyTask("fx-2");
    const sent = await request(b.id);
    const envelope = await queuedEnvelope(sent.commandId);
    // A first delivery that did its git work and died before its transaction.
    const handler = fixtureHandler(w.deps);
    const message = {
      id: 0n,
      queue: "integration" as const,
      commandId: sent.commandId,
      commandType: "fixture.publish",
    };
    await handler.prepare?.({
      db: t.db,
      message: { ...message, envelope, deliveries: 1, originQueue: null, lastError: null },
      command: envelope,
      now: new Date(),
    });
    expect(await t.db.agentRun.count({ where: { taskId: b.id } })).toBe(0);
    const fork = workspaceFork(fixtureRecordIds(sent.commandId).runId);
    const pushed = git(fork, "rev-parse", "main");
    // A mark in the fork's folder: a delivery that made the fork again would lose it.
    writeFileSync(join(w.store.gitdir(fork), "first-delivery"), "");
    expect((await consume()).actions.ack).toBe(1);
    const cs = await t.db.changeSet.findUniqueOrThrow({ where: { id: sent.changeSetId } });
    // The second delivery took the commit the first one pushed instead of making another.
    expect(cs.fork).toBe(fork);
    expect(cs.commit).toBe(pushed);
    expect(existsSync(join(w.store.gitdir(fork), "first-delivery"))).toBe(true);
    expect(git(cs.fork, "rev-list", "--count", `${cs.baseCommit}..main`)).toBe("1");

    // The queue delivers it once more.
    await withTransaction(w.db, (ctx) => putOnQueue(ctx, "integration", envelope, w.deps));
    expect((await consume()).actions.ack).toBe(1);
    expect(await t.db.changeSet.count({ where: { taskId: b.id } })).toBe(1);
    expect(await t.db.agentRun.count({ where: { taskId: b.id } })).toBe(1);
    const published = await t.db.outboxRow.count({
      where: { eventType: "changeset.published", envelope: { path: ["taskId"], equals: b.id } },
    });
    expect(published).toBe(1);
    // Asking again is the same command, answered from the ChangeSet.
    expect(await request(b.id)).toEqual({ ...sent, duplicate: true });
  });

  it("publishes nothing for a Task an Agent took meanwhile, or files that cannot be written, and says why", async () => {
    const taken = await changeWithReadyTask("fx-3");
    const sent = await request(taken.b.id);
    await t.db.task.update({ where: { id: taken.b.id }, data: { state: "running", agentId: `agt_${taken.b.id}` } });
    expect((await consume()).actions.ack).toBe(1);
    expect(await t.db.changeSet.findUnique({ where: { id: sent.changeSetId } })).toBeNull();
    expect(await t.db.agentRun.findFirstOrThrow({ where: { taskId: taken.b.id, reason: "fixture" } })).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/an Agent is working/),
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: taken.b.id } })).toMatchObject({ state: "running" });

    // `src` is a folder of the template: a file cannot take its place.
    const folder = await changeWithReadyTask("fx-4");
    const bad = await request(folder.b.id, { summary: "Replace a folder", files: [{ path: "src", content: "x\n" }] });
    expect((await consume()).actions.ack).toBe(1);
    expect(await t.db.changeSet.findUnique({ where: { id: bad.changeSetId } })).toBeNull();
    expect(await t.db.agentRun.findFirstOrThrow({ where: { taskId: folder.b.id, reason: "fixture" } })).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/cannot write src/),
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: folder.b.id } })).toMatchObject({ state: "ready" });
  });
});
