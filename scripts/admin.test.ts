import { spawn } from "node:child_process";
import { join } from "node:path";
import { CREDENTIAL_PROVIDER, setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { ROOT } from "./lib/stack.ts";

/**
 * `npm run admin` as an operator runs it: a process against a real database, the password piped in.
 * Every test asserts what the operator sees (the exit code, the printed line) and what is stored.
 */
const t = useTestDatabase();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function admin(args: string[], stdin = ""): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "scripts/admin.ts"), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: t.url },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const json = <T>(r: Run): T => {
  if (r.code !== 0) throw new Error(`admin exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};

const userAdd = (tenant: string, email: string, role: string, name = "Someone") => [
  "user",
  "add",
  "--tenant",
  tenant,
  "--email",
  email,
  "--name",
  name,
  "--role",
  role,
  "--password-stdin",
  "--json",
];

/**
 * Whether better-auth's check accepts `password` for the user: setUserPassword verifies the stored
 * hash first and writes nothing when it matches (a mismatch writes, and the test fails anyway).
 */
async function signsInWith(email: string, password: string): Promise<boolean> {
  const user = await t.db.user.findUniqueOrThrow({ where: { email }, select: { id: true } });
  return !(await setUserPassword(t.db, user.id, password));
}

async function storedHash(email: string): Promise<string> {
  const user = await t.db.user.findUniqueOrThrow({ where: { email }, select: { id: true } });
  const account = await t.db.account.findUniqueOrThrow({
    where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER, accountId: user.id } },
  });
  return account.password ?? "";
}

// Each run starts a process (a few seconds on a busy two-core machine): one generous limit per test.
describe("npm run admin", { timeout: 180_000 }, () => {
  it("creates a tenant and its first admin, who signs in with the password given on standard input", async () => {
    const tenant = json<{ tenantId: string; slug: string; created: boolean }>(
      await admin(["tenant", "add", "--slug", "acme", "--name", "Acme Corp", "--json"]),
    );
    expect(tenant).toMatchObject({ slug: "acme", name: "Acme Corp", created: true });
    expect(tenant.tenantId).toMatch(/^ten_/);

    const added = await admin(userAdd("acme", "Ada@Acme.test", "admin", "Ada"), "ada-long-password\n");
    expect(json(added)).toMatchObject({
      tenantId: tenant.tenantId,
      email: "ada@acme.test",
      name: "Ada",
      role: "admin",
      createdUser: true,
      roleChanged: true,
      passwordChanged: true,
    });
    const user = await t.db.user.findUniqueOrThrow({
      where: { email: "ada@acme.test" },
      include: { memberships: true },
    });
    expect(user.memberships).toEqual([expect.objectContaining({ tenantId: tenant.tenantId, role: "admin" })]);
    const hash = await storedHash("ada@acme.test");
    expect(hash).not.toContain("ada-long-password");
    // The line ending is not part of the password.
    expect(await signsInWith("ada@acme.test", "ada-long-password")).toBe(true);
    expect(await storedHash("ada@acme.test")).toBe(hash);
  });

  it("writes nothing when run again with the same input, and says so", async () => {
    const before = await storedHash("ada@acme.test");
    const tenant = await admin(["tenant", "add", "--slug", "acme", "--name", "Another Name"]);
    expect(tenant.code).toBe(0);
    expect(tenant.stdout).toMatch(/^tenant acme \(ten_[^,]+, "Acme Corp"\) exists already; nothing written\n$/);
    const again = await admin(userAdd("acme", "ada@acme.test", "admin"), "ada-long-password");
    expect(json(again)).toMatchObject({ createdUser: false, roleChanged: false, passwordChanged: false, name: "Ada" });
    expect(await storedHash("ada@acme.test")).toBe(before);
    expect(await t.db.tenant.count({ where: { slug: "acme" } })).toBe(1);
  });

  it("gives a known address a role in another tenant and a new password, ending its sessions", async () => {
    await admin(["tenant", "add", "--slug", "globex", "--name", "Globex"]);
    const ada = await t.db.user.findUniqueOrThrow({ where: { email: "ada@acme.test" } });
    await t.db.session.create({
      data: { id: "ses_ada", userId: ada.id, token: "tok_ada", expiresAt: new Date(Date.now() + 3_600_000) },
    });
    const r = await admin(userAdd("globex", "ada@acme.test", "viewer", "Not Ada").slice(0, -1), "a-new-password-1\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `ada@acme.test (${ada.id}) in globex: existing user, role viewer, password set, 1 sessions ended\n`,
    );
    const after = await t.db.user.findUniqueOrThrow({ where: { id: ada.id }, include: { memberships: true } });
    expect(after.name).toBe("Ada");
    expect(after.memberships.map((m) => [m.role, m.tenantId]).sort()).toEqual(
      [
        ["admin", (await t.db.tenant.findUniqueOrThrow({ where: { slug: "acme" } })).id],
        ["viewer", (await t.db.tenant.findUniqueOrThrow({ where: { slug: "globex" } })).id],
      ].sort(),
    );
    expect(await signsInWith("ada@acme.test", "a-new-password-1")).toBe(true);
    expect(await t.db.session.count({ where: { userId: ada.id } })).toBe(0);
  });

  it("refuses with the reason and exit code 1, writing nothing", async () => {
    const users = await t.db.user.count();
    const memberships = await t.db.membership.findMany({ orderBy: [{ tenantId: "asc" }, { userId: "asc" }] });
    const refusals: [string[], string, RegExp][] = [
      [userAdd("nowhere", "bob@x.test", "member"), "bob-long-password", /no tenant nowhere; create it first/],
      [userAdd("acme", "bob@x.test", "member"), "short", /password: the password needs at least 12 characters/],
      [userAdd("acme", "bob@x.test", "owner"), "bob-long-password", /role: /],
      [userAdd("acme", "not-an-address", "member"), "bob-long-password", /email: an email address/],
      // The tenant keeps one admin.
      [userAdd("acme", "ada@acme.test", "member"), "a-new-password-1", /ada@acme.test is the last admin of acme/],
      [userAdd("acme", "bob@x.test", "member").slice(0, -2), "", /give the password on standard input/],
      [["tenant", "add", "--slug", "Bad Slug", "--name", "x"], "", /slug: lowercase letters/],
      [["user", "remove"], "", /unknown command "user remove"/],
    ];
    // Each refusal writes nothing, so they can run side by side (each is a process of its own).
    const runs = await Promise.all(refusals.map(([args, stdin]) => admin(args, stdin)));
    for (const [i, [args, , message]] of refusals.entries()) {
      const r = runs[i] as Run;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(r.stderr).toMatch(/^rhumbatron: /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await t.db.user.count()).toBe(users);
    expect(await t.db.membership.findMany({ orderBy: [{ tenantId: "asc" }, { userId: "asc" }] })).toEqual(memberships);
    expect(await t.db.tenant.count()).toBe(2);
  });
});
