import { describe, expect, it } from "vitest";
import { buildEvent } from "../events/envelope.ts";
import { notificationPlan, notificationText, recipientsOf } from "./model.ts";

const base = {
  eventId: `evt_${"0".repeat(32)}`,
  tenantId: "ten_a",
  projectId: "proj_a",
  changeId: "chg_a",
  taskId: null,
  actor: { kind: "system" as const, id: "verification" },
  resource: "change:chg_a",
  canonicalGeneration: 3,
  causedBy: null,
  correlationId: "chg_a",
  timestamp: new Date("2026-06-01T00:00:00Z"),
};

describe("who hears of an Event", () => {
  it("asks the tenant's approvers to approve, and tells the requester of a landing, a rejection or a conflict", () => {
    const requested = buildEvent({
      ...base,
      eventType: "approval.requested",
      payload: { candidateId: "cand_1", treeHash: "t" },
    });
    expect(notificationPlan(requested)).toEqual({
      kind: "approval_requested",
      audience: "approvers",
      candidateId: "cand_1",
      deadLetterId: null,
    });
    const advanced = buildEvent({
      ...base,
      eventType: "canonical.advanced",
      payload: { candidateId: "cand_1", fromGeneration: 3, toGeneration: 4, treeHash: "t" },
    });
    expect(notificationPlan(advanced)).toMatchObject({ kind: "change_promoted", audience: "requester" });
    const rejected = (reason: string) =>
      notificationPlan(
        buildEvent({ ...base, eventType: "candidate.rejected", payload: { candidateId: "cand_1", reason, gaps: [] } }),
      );
    expect(rejected("approval rejected")).toMatchObject({ kind: "change_rejected", audience: "requester" });
    expect(rejected("merge conflict")).toMatchObject({ kind: "change_conflicted", audience: "requester" });
    const dl = buildEvent({
      ...base,
      changeId: null,
      eventType: "dead_letter.recorded",
      payload: {
        deadLetterId: "dl_x",
        commandId: "cmd_x",
        commandType: "candidate.land",
        originQueue: "integration",
        reason: "boom",
        attempts: 1,
      },
    });
    expect(notificationPlan(dl)).toEqual({
      kind: "dead_letter",
      audience: "operators",
      candidateId: null,
      deadLetterId: "dl_x",
    });
    expect(notificationPlan(buildEvent({ ...base, eventType: "task.ready", payload: { key: "a" } }))).toBeNull();
  });

  it("never tells a person of what they did themselves", () => {
    expect(recipientsOf(["usr_a", "usr_b", "usr_a"], { kind: "user", id: "usr_a" })).toEqual(["usr_b"]);
    expect(recipientsOf(["usr_a", "usr_b"], { kind: "system", id: "usr_a" })).toEqual(["usr_a", "usr_b"]);
  });

  it("says what happened in the product's words", () => {
    expect(notificationText("approval_requested", { projectName: "shop", changeTitle: "Add a wishlist" }).title).toBe(
      "Approval waiting: “Add a wishlist”",
    );
    expect(notificationText("change_promoted", { projectName: "shop", changeTitle: "W", generation: 4 }).detail).toBe(
      "It was promoted to S4 in shop.",
    );
    expect(
      notificationText("dead_letter", {
        projectName: "shop",
        changeTitle: null,
        commandType: "candidate.land",
        reason: "boom",
      }),
    ).toEqual({ title: "Dead letter: candidate.land in shop", detail: "boom. Retry or Dismiss it on Operations." });
  });
});
