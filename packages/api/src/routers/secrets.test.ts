import { readTenantSecrets } from "@rhumbatron/db";
import { dumpAllRows, useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, ROLES, rejection, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";

const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

const tenantId = ACME.tenantId;
const admin = () => callerAs(t.db, emailFor("admin"));
const AUTH = () => testServices().credentialSecret;
const fresh = (tag: string) => `sk-${tag}-${crypto.randomUUID()}`;

describe("secrets.set, list and delete (docs/agents.md, Secrets)", () => {
  it("an admin sets a secret; the list names it, when and by whom, and never holds the value or anything made from it", async () => {
    const value = fresh("list");
    const set = await admin().secrets.set({ tenantId, name: "ANTHROPIC_API_KEY", value });
    expect(set).toMatchObject({ name: "ANTHROPIC_API_KEY", created: true });
    expect(JSON.stringify(set)).not.toContain(value);

    const list = await admin().secrets.list({ tenantId });
    const entry = list.find((s) => s.name === "ANTHROPIC_API_KEY");
    expect(entry).toMatchObject({ setBy: { userId: "usr_acme_admin", email: emailFor("admin") } });
    expect(entry?.updatedAt).toBeInstanceOf(Date);
    expect(Object.keys(entry ?? {}).sort()).toEqual(["createdAt", "name", "setBy", "updatedAt"]);
    expect(JSON.stringify(list)).not.toContain(value);
    expect(JSON.stringify(list)).not.toContain(Buffer.from(value).toString("base64"));
    // Another tenant's admin sees nothing of Acme's.
    expect(await callerAs(t.db, OUTSIDER_EMAIL).secrets.list({ tenantId: OTHER.tenantId })).toEqual([]);
  });

  it("setting a name again replaces the value: the run gets the new one", async () => {
    const first = fresh("first");
    const second = fresh("second");
    await admin().secrets.set({ tenantId, name: "OPENAI_API_KEY", value: first });
    const again = await admin().secrets.set({ tenantId, name: "OPENAI_API_KEY", value: second });
    expect(again.created).toBe(false);
    expect(await readTenantSecrets(t.db, tenantId, ["OPENAI_API_KEY"], AUTH())).toEqual({ OPENAI_API_KEY: second });
    expect((await admin().secrets.list({ tenantId })).filter((s) => s.name === "OPENAI_API_KEY")).toHaveLength(1);
  });

  it("delete removes it; deleting it again is NOT_FOUND", async () => {
    await admin().secrets.set({ tenantId, name: "GONE_KEY", value: fresh("gone") });
    expect(await admin().secrets.delete({ tenantId, name: "GONE_KEY" })).toEqual({ name: "GONE_KEY" });
    expect((await admin().secrets.list({ tenantId })).map((s) => s.name)).not.toContain("GONE_KEY");
    expect((await rejection(admin().secrets.delete({ tenantId, name: "GONE_KEY" }))).code).toBe("NOT_FOUND");
  });

  it("everyone below admin is FORBIDDEN to set, list or delete, and nothing is written", async () => {
    await admin().secrets.set({ tenantId, name: "KEPT_KEY", value: fresh("kept") });
    const before = await t.db.tenantSecret.findMany({ orderBy: { name: "asc" } });
    for (const role of ROLES.filter((r) => r !== "admin")) {
      const c = callerAs(t.db, emailFor(role));
      for (const call of [
        c.secrets.set({ tenantId, name: "KEPT_KEY", value: "sk-by-a-non-admin" }),
        c.secrets.list({ tenantId }),
        c.secrets.delete({ tenantId, name: "KEPT_KEY" }),
      ]) {
        expect((await rejection(call)).code, role).toBe("FORBIDDEN");
      }
    }
    expect(await t.db.tenantSecret.findMany({ orderBy: { name: "asc" } })).toEqual(before);
  });

  it("bad names and values are BAD_REQUEST, the answer never repeats the value, and nothing is written", async () => {
    const before = await t.db.tenantSecret.count();
    const value = fresh("bad");
    const badNames = ["", "lower_case", "1KEY", "A-B", `K${"X".repeat(64)}`, "PATH", "RHUMBATRON_TOKEN"];
    for (const name of badNames) {
      const err = await rejection(admin().secrets.set({ tenantId, name, value }));
      expect(err.code, name).toBe("BAD_REQUEST");
      expect(err.message).not.toContain(value);
      expect((await rejection(admin().secrets.delete({ tenantId, name }))).code, name).toBe("BAD_REQUEST");
    }
    for (const bad of ["", `${value}\u0000`, `${value}${"x".repeat(8192)}`]) {
      const err = await rejection(admin().secrets.set({ tenantId, name: "GOOD_KEY", value: bad }));
      expect(err.code).toBe("BAD_REQUEST");
      expect(err.message).not.toContain(value);
      expect(JSON.stringify(err.cause ?? null)).not.toContain(value);
    }
    expect(await t.db.tenantSecret.count()).toBe(before);
  });

  it("after set and replace, no row of any table holds a value, its base64 or its URL-safe base64", async () => {
    const first = `${fresh("nowhere")}/+=`;
    const second = fresh("nowhere2");
    await admin().secrets.set({ tenantId, name: "NOWHERE_KEY", value: first });
    await admin().secrets.set({ tenantId, name: "NOWHERE_KEY", value: second });
    const all = await dumpAllRows(t.db);
    expect(all).toContain("NOWHERE_KEY");
    for (const v of [first, second]) {
      for (const form of [v, Buffer.from(v).toString("base64"), Buffer.from(v).toString("base64url")]) {
        expect(all).not.toContain(form);
      }
    }
    expect(await readTenantSecrets(t.db, tenantId, ["NOWHERE_KEY"], AUTH())).toEqual({ NOWHERE_KEY: second });
  });
});
