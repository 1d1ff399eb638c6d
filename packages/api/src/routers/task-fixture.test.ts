import { PATCH_MAX_BYTES } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ACME,
  callerAs,
  emailFor,
  OUTSIDER_EMAIL,
  rejection,
  seedTenants,
  tableFingerprint,
} from "../testing/fixtures.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const changeId = "chg_fixture_api";
const fix = {
  summary: "Fix the cart total",
  files: [{ path: "public/cart.js", content: "export const total = 1;\n" }],
};

/** One Task of a Change in each state a fixture may meet. */
async function seedTasks() {
  await t.db.change.create({
    data: { id: changeId, projectId: shop, title: "Cart", riskTier: "low", clientRequestId: changeId },
  });
  const states = {
    ready: { state: "ready" as const },
    failed: { state: "failed" as const },
    pending: { state: "pending" as const },
    running: { state: "running" as const, agentId: "agt_task_fx_running" },
    completed: { state: "completed" as const },
    cancelled: { state: "blocked" as const, blockedLimit: "cancelled" },
  };
  for (const [key, data] of Object.entries(states)) {
    await t.db.task.create({ data: { id: `task_fx_${key}`, changeId, key, title: key, ...data } });
  }
}

beforeAll(async () => {
  await seedTenants(t.db);
  await seedTasks();
});

const member = () => callerAs(t.db, emailFor("member"));
const publish = (taskId: string, input: Record<string, unknown> = fix) =>
  member().task.publishFixture({ tenantId: ACME.tenantId, taskId, ...input } as never);
const queued = () => t.db.queueMessage.findMany({ where: { commandType: "fixture.publish" } });

describe("task.publishFixture", () => {
  it("sends fixture.publish on the integration queue once; the same request again is the same command", async () => {
    const two = { ...fix, files: [...fix.files, { path: "public/old.js", delete: true }] };
    const first = await publish("task_fx_ready", two);
    expect(first.commandId).toMatch(/^cmd_fixture_task_fx_ready_a1_[0-9a-f]{32}$/);
    expect(first.changeSetId).toMatch(/^cs_[0-9a-f-]{36}$/);
    expect(first.duplicate).toBe(false);
    // The files in another order: the same fixture.
    const again = await publish("task_fx_ready", { ...two, files: [...two.files].reverse() });
    expect(again).toEqual({ ...first, duplicate: true });
    const rows = await queued();
    expect(rows.map((r) => [r.queue, r.commandId, r.taskId, r.changeId])).toEqual([
      ["integration", first.commandId, "task_fx_ready", changeId],
    ]);
    expect((rows[0]?.envelope as { payload?: unknown } | undefined)?.payload).toMatchObject({
      ...two,
      attempt: 1,
      actorId: "usr_acme_member",
    });
    // Other content is another fixture (the worker publishes at most one for the Task).
    const other = await publish("task_fx_ready", { ...fix, summary: "Fix it differently" });
    expect(other.commandId).not.toBe(first.commandId);
  });

  it("takes a failed Task too", async () => {
    expect(await publish("task_fx_failed")).toMatchObject({ duplicate: false });
  });

  it("refuses paths outside the work tree, into .git, twice, and more than 512 KB, with 400 and nothing written", async () => {
    const bad = [
      { ...fix, files: [{ path: "../outside.js", content: "x" }] },
      { ...fix, files: [{ path: "/etc/passwd", content: "x" }] },
      { ...fix, files: [{ path: ".git/hooks/pre-commit", content: "x" }] },
      { ...fix, files: [{ path: "src\\win.js", content: "x" }] },
      { ...fix, files: [fix.files[0], { path: "public/cart.js", delete: true }] },
      {
        ...fix,
        files: [
          { path: "a.txt", content: "x".repeat(PATCH_MAX_BYTES / 2) },
          { path: "b.txt", content: "x".repeat(PATCH_MAX_BYTES / 2 + 1) },
        ],
      },
      { ...fix, files: [] },
      { ...fix, summary: "" },
      { ...fix, files: [{ path: "a.txt", content: "nul \u0000" }] },
    ];
    for (const input of bad) {
      const before = await tableFingerprint(t.db);
      const err = await rejection(publish("task_fx_ready", input));
      expect(err.code, JSON.stringify(input).slice(0, 120)).toBe("BAD_REQUEST");
      expect(await tableFingerprint(t.db)).toEqual(before);
    }
  });

  it("refuses a pending, running, completed or cancelled Task with 412 and nothing written", async () => {
    for (const [taskId, why] of [
      ["task_fx_pending", /waits for the Tasks it depends on/],
      ["task_fx_running", /an Agent is working/],
      ["task_fx_completed", /has its ChangeSet/],
      ["task_fx_cancelled", /cancelled/],
    ] as const) {
      const before = await tableFingerprint(t.db);
      const err = await rejection(publish(taskId));
      expect(err.code, taskId).toBe("PRECONDITION_FAILED");
      expect(err.message).toMatch(why);
      expect(await tableFingerprint(t.db)).toEqual(before);
    }
  });

  it("refuses a viewer, and a Task of another tenant is not found", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    expect(
      (await rejection(viewer.task.publishFixture({ tenantId: ACME.tenantId, taskId: "task_fx_ready", ...fix }))).code,
    ).toBe("FORBIDDEN");
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    expect(
      (await rejection(outsider.task.publishFixture({ tenantId: "ten_other", taskId: "task_fx_failed", ...fix }))).code,
    ).toBe("NOT_FOUND");
  });
});
