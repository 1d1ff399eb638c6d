import { describe, expect, it } from "vitest";
import { actorName, namesOf, REMOVED_USER } from "../auth/people.ts";
import { seedProjects, useTestDatabase } from "../testing/index.ts";
import { projectFeedAfter } from "./project-overview.ts";

const t = useTestDatabase();

describe("people by name", () => {
  it("names users, the landing queue and a removed user, never by a bare ID", async () => {
    await t.db.user.create({ data: { id: "usr_ada", email: "ada@example.com", name: "Ada Approver" } });
    const names = await namesOf(t.db, ["usr_ada", "usr_gone", null]);
    expect([...names]).toEqual([["usr_ada", "Ada Approver"]]);
    expect(actorName({ kind: "user", id: "usr_ada" }, names)).toBe("Ada Approver");
    expect(actorName("user:usr_gone", names)).toBe(REMOVED_USER);
    expect(actorName("system:landing-queue", names)).toBe("the landing queue");
    expect(actorName({ kind: "system", id: "sweeper" }, names)).toBe("Rhumbatron (sweeper)");
  });

  it("the project feed shows who by name beside the raw actor", async () => {
    await seedProjects(t.db, ["proj_feed"]);
    await t.db.user.create({ data: { id: "usr_bo", email: "bo@example.com", name: "Bo Builder" } });
    const row = (eventId: string, actor: string) => ({
      projectId: "proj_feed",
      eventId,
      eventType: "change.created",
      actor,
      summary: "s",
      occurredAt: new Date("2026-12-02T10:00:00Z"),
    });
    await t.db.projectEvent.createMany({
      data: [row("evt_1", "user:usr_bo"), row("evt_2", "system:landing-queue"), row("evt_3", "user:usr_nobody")],
    });
    const feed = await projectFeedAfter(t.db, { projectId: "proj_feed", afterId: null, limit: 10 });
    expect(feed.map((e) => [e.actor, e.actorName])).toEqual([
      ["user:usr_bo", "Bo Builder"],
      ["system:landing-queue", "the landing queue"],
      ["user:usr_nobody", REMOVED_USER],
    ]);
  });
});
