import { verifyPassword } from "better-auth/crypto";
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

  it("gives the demo admin the configured password, the dev default when none is given, and keeps it on a rerun", async () => {
    const credential = () =>
      t.db.account.findUniqueOrThrow({
        where: { providerId_accountId: { providerId: "credential", accountId: DEMO.userId } },
      });
    const first = await credential();
    expect(await verifyPassword({ hash: first.password ?? "", password: "rhumbatron-demo" })).toBe(true);

    expect((await seedDemo(t.db, undefined, { password: "rhumbatron-demo" })).password).toBe("rhumbatron-demo");
    expect(await credential()).toEqual(first);

    await seedDemo(t.db, undefined, { password: "a-new-password" });
    const changed = await credential();
    expect(await verifyPassword({ hash: changed.password ?? "", password: "a-new-password" })).toBe(true);

    // null (prod without RHUMBATRON_DEMO_PASSWORD): the credential is left as it is.
    expect((await seedDemo(t.db, undefined, { password: null })).password).toBeNull();
    expect(await credential()).toEqual(changed);
  });
});
