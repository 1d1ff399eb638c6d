import { DomainError } from "@rhumbatron/core";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { openCredentials, sealCredentials } from "./import-credentials.ts";
import {
  deleteTenantSecret,
  listTenantSecrets,
  readTenantSecrets,
  setTenantSecret,
  TenantSecretError,
} from "./tenant-secrets.ts";

const t = useTestDatabase();
const AUTH = "tenant-secrets-test-auth-secret";
const A = "ten_secrets_a";
const B = "ten_secrets_b";
const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 12, 0, s));

beforeAll(async () => {
  for (const id of [A, B]) await t.db.tenant.create({ data: { id, slug: id, name: id } });
  await t.db.user.create({ data: { id: "usr_secrets_admin", email: "admin@secrets.test", name: "Ada" } });
});

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (err: unknown) => err,
  );
}

describe("tenant secrets in the database (docs/agents.md, Secrets)", () => {
  it("sets, replaces, lists without values, reads for a run and deletes", async () => {
    const first = await setTenantSecret(
      t.db,
      { tenantId: A, name: "ANTHROPIC_API_KEY", value: "sk-first-value", userId: "usr_secrets_admin" },
      { authSecret: AUTH, now: at(1) },
    );
    expect(first).toEqual({ name: "ANTHROPIC_API_KEY", created: true, updatedAt: at(1) });
    const second = await setTenantSecret(
      t.db,
      { tenantId: A, name: "ANTHROPIC_API_KEY", value: "sk-second-value", userId: "usr_gone" },
      { authSecret: AUTH, now: at(2) },
    );
    expect(second).toEqual({ name: "ANTHROPIC_API_KEY", created: false, updatedAt: at(2) });
    await setTenantSecret(
      t.db,
      { tenantId: A, name: "OPENAI_API_KEY", value: "sk-openai", userId: "usr_secrets_admin" },
      { authSecret: AUTH, now: at(3) },
    );

    const list = await listTenantSecrets(t.db, A);
    expect(list).toEqual([
      { name: "ANTHROPIC_API_KEY", createdAt: at(1), updatedAt: at(2), setBy: null },
      {
        name: "OPENAI_API_KEY",
        createdAt: at(3),
        updatedAt: at(3),
        setBy: { userId: "usr_secrets_admin", name: "Ada", email: "admin@secrets.test" },
      },
    ]);
    expect(JSON.stringify(list)).not.toContain("sk-");
    expect(await listTenantSecrets(t.db, B)).toEqual([]);

    expect(await readTenantSecrets(t.db, A, undefined, AUTH)).toEqual({
      ANTHROPIC_API_KEY: "sk-second-value",
      OPENAI_API_KEY: "sk-openai",
    });
    expect(await readTenantSecrets(t.db, A, ["OPENAI_API_KEY"], AUTH)).toEqual({ OPENAI_API_KEY: "sk-openai" });
    expect(await readTenantSecrets(t.db, B, undefined, AUTH)).toEqual({});

    expect(await deleteTenantSecret(t.db, { tenantId: A, name: "OPENAI_API_KEY" })).toEqual({ name: "OPENAI_API_KEY" });
    const again = await failure(deleteTenantSecret(t.db, { tenantId: A, name: "OPENAI_API_KEY" }));
    expect(again).toMatchObject({ code: "NOT_FOUND" });
    expect((await listTenantSecrets(t.db, A)).map((s) => s.name)).toEqual(["ANTHROPIC_API_KEY"]);
  });

  it("names the secrets a run asked for that the tenant has not set", async () => {
    const err = await failure(readTenantSecrets(t.db, B, ["ZED_KEY", "CODEX_KEY"], AUTH));
    expect(err).toBeInstanceOf(TenantSecretError);
    expect(err).toMatchObject({ code: "PRECONDITION_FAILED", kind: "missing", names: ["CODEX_KEY", "ZED_KEY"] });
    expect((err as Error).message).toContain("rhumbatron secrets set");
  });

  it("a secret sealed under another auth secret, or moved to another tenant or name, does not open: set it again", async () => {
    await setTenantSecret(
      t.db,
      { tenantId: B, name: "MOVED_KEY", value: "sk-moved-value", userId: "usr_secrets_admin" },
      { authSecret: AUTH, now: at(4) },
    );
    const changed = await failure(readTenantSecrets(t.db, B, ["MOVED_KEY"], "a-new-auth-secret"));
    expect(changed).toBeInstanceOf(TenantSecretError);
    expect(changed).toMatchObject({ kind: "unreadable", names: ["MOVED_KEY"] });
    expect((changed as Error).message).toMatch(/auth secret changed since it was set; an admin must set it again/);
    expect(await failure(readTenantSecrets(t.db, B, ["MOVED_KEY"], undefined))).toMatchObject({ kind: "unreadable" });

    // The same sealed text under another name, or in another tenant: bound to where it was set.
    const { sealed } = await t.db.tenantSecret.findUniqueOrThrow({
      where: { tenantId_name: { tenantId: B, name: "MOVED_KEY" } },
    });
    expect(sealed).not.toContain("sk-moved-value");
    const base = { sealed, createdAt: at(5), updatedAt: at(5), updatedBy: "usr_secrets_admin" };
    await t.db.tenantSecret.create({ data: { ...base, tenantId: B, name: "RENAMED_KEY" } });
    await t.db.tenantSecret.create({ data: { ...base, tenantId: A, name: "MOVED_KEY" } });
    expect(await failure(readTenantSecrets(t.db, B, ["RENAMED_KEY"], AUTH))).toMatchObject({ kind: "unreadable" });
    expect(await failure(readTenantSecrets(t.db, A, ["MOVED_KEY"], AUTH))).toMatchObject({ kind: "unreadable" });
    // Setting it again makes it readable.
    await setTenantSecret(
      t.db,
      { tenantId: A, name: "MOVED_KEY", value: "sk-set-again", userId: "usr_secrets_admin" },
      { authSecret: AUTH, now: at(6) },
    );
    expect(await readTenantSecrets(t.db, A, ["MOVED_KEY"], AUTH)).toEqual({ MOVED_KEY: "sk-set-again" });
  });

  it("refuses bad names and values, and a server without an auth secret, writing nothing", async () => {
    const before = await t.db.tenantSecret.count();
    const ok = { tenantId: A, name: "GOOD_KEY", value: "v", userId: "usr_secrets_admin" };
    for (const bad of [{ name: "lower" }, { name: "PATH" }, { value: "" }, { value: "x".repeat(8193) }]) {
      const err = await failure(setTenantSecret(t.db, { ...ok, ...bad }, { authSecret: AUTH, now: at(7) }));
      expect(err, JSON.stringify(bad).slice(0, 40)).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: "INVALID_INPUT" });
      expect((err as Error).message).not.toContain("xxxxxxxx");
    }
    expect(await failure(setTenantSecret(t.db, ok, { authSecret: undefined, now: at(7) }))).toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    expect(await failure(deleteTenantSecret(t.db, { tenantId: A, name: "not a name" }))).toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(await t.db.tenantSecret.count()).toBe(before);
  });

  it("import credentials still seal and open as before, and only for their project", () => {
    const c = { username: "ada", password: "pw-123456" };
    const sealed = sealCredentials(c, AUTH, "proj_1");
    expect(openCredentials(sealed, AUTH, "proj_1")).toEqual(c);
    expect(openCredentials(sealed, AUTH, "proj_2")).toBeNull();
    expect(openCredentials(sealed, "other", "proj_1")).toBeNull();
  });
});
