import { describe, expect, it } from "vitest";
import { listMemberships, listProjects } from "../queries/projects.ts";
import { useTestDatabase } from "../testing/index.ts";
import { DEMO, seedDemo } from "./seed-demo.ts";

const t = useTestDatabase();

describe("seedDemo", () => {
  it("creates the demo tenant, admin and one project at generation 0, and is idempotent", async () => {
    const first = await seedDemo(t.db);
    expect(first.created).toBe(true);
    expect(first.projectId).toMatch(/^proj_[0-9a-f-]{36}$/);
    const second = await seedDemo(t.db);
    expect(second).toEqual({ ...first, created: false });
    const projects = await listProjects(t.db, DEMO.tenantId);
    expect(projects).toHaveLength(1);
    expect(projects[0]).toMatchObject({ name: DEMO.projectName, canonicalGeneration: 0, status: "provisioning" });
    expect(
      await t.db.queueMessage.count({ where: { commandType: "project.provision", projectId: first.projectId } }),
    ).toBe(1);
    expect(await listMemberships(t.db, DEMO.userId)).toEqual([
      { tenantId: DEMO.tenantId, slug: DEMO.tenantSlug, name: DEMO.tenantName, role: "admin" },
    ]);
  });
});
