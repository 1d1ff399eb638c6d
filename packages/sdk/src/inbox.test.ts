import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Role } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRhumbatronClient } from "./client.ts";
import { type ApiServer, startApiServer } from "./testing/api-server.ts";
import { ACME, SHOP, seedWithTokens } from "./testing/seed.ts";

// `rhumbatron inbox` as a user runs it (a child process through the bin shim) and the SDK's inbox
// methods, against the real API on a local HTTP server.
const t = useTestDatabase();
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/rhumbatron.js", import.meta.url));
let server: ApiServer;
let tokens: Record<Role, string>;

async function notification(
  id: string,
  userId: string,
  minute: number,
  o: { kind?: string; actorId?: string; title?: string; detail?: string } = {},
) {
  await t.db.notification.create({
    data: {
      id,
      tenantId: ACME.tenantId,
      userId,
      eventId: `evt_${id}`,
      kind: o.kind ?? "approval_requested",
      projectId: SHOP,
      changeId: "chg_inbox",
      candidateId: "cand_inbox",
      actorId: o.actorId ?? "usr_acme_member",
      title: o.title ?? `Approval waiting: “Inbox ${id}”`,
      detail: o.detail ?? "Its Candidate passed verification in shop and waits for an approval of its composed tree.",
      occurredAt: new Date(Date.UTC(2026, 5, 1, 10, minute)),
    },
  });
}

beforeAll(async () => {
  tokens = await seedWithTokens(t.db);
  server = await startApiServer(t.db);
  await notification("ntf_i1", "usr_acme_approver", 1);
  await notification("ntf_i2", "usr_acme_approver", 2, {
    kind: "change_rejected",
    actorId: "usr_acme_admin",
    title: "Your Change “Inbox” was rejected",
    detail: "In shop: approval rejected: not yet.",
  });
  await notification("ntf_i3", "usr_acme_admin", 3);
});
afterAll(() => server?.close());

function run(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("RHUMBATRON_") && k !== "NODE_OPTIONS") env[k] = v;
  env.RHUMBATRON_URL = server.url;
  env.RHUMBATRON_TOKEN = token;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("rhumbatron inbox", () => {
  it("lists the caller's notifications newest first, unread marked, people by name", async () => {
    const r = await run(["inbox"], tokens.approver);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([
      "2 unread, newest first (* unread)",
      "* 2026-06-01 10:02  Your Change “Inbox” was rejected (by Acme admin)",
      "    In shop: approval rejected: not yet.",
      "    candidate cand_inbox in shop: rhumbatron candidate show cand_inbox",
      "* 2026-06-01 10:01  Approval waiting: “Inbox ntf_i1” (requested by Acme member)",
      "    Its Candidate passed verification in shop and waits for an approval of its composed tree.",
      "    candidate cand_inbox in shop: rhumbatron candidate show cand_inbox",
    ]);
    const empty = await run(["inbox"], tokens.viewer);
    expect(empty.stdout.trim()).toBe("your inbox is empty");
  });

  it("--read marks every one of the caller's notifications read, and nobody else's", async () => {
    const r = await run(["inbox", "--read", "--json"], tokens.approver);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.unread).toBe(2);
    expect(out.notifications.map((n: { id: string }) => n.id)).toEqual(["ntf_i2", "ntf_i1"]);
    expect(out.marked).toEqual({ marked: 2, unread: 0 });
    expect(await t.db.notification.count({ where: { userId: "usr_acme_approver", readAt: null } })).toBe(0);
    expect(await t.db.notification.count({ where: { userId: "usr_acme_admin", readAt: null } })).toBe(1);
    const after = await run(["inbox", "--unread"], tokens.approver);
    expect(after.stdout.trim()).toBe("your inbox is empty");
    const all = await run(["inbox"], tokens.approver);
    expect(all.stdout).toContain("  2026-06-01 10:02  Your Change “Inbox” was rejected");
  });

  it("the SDK marks one read and counts what is unread; another person's is NOT_FOUND", async () => {
    const admin = createRhumbatronClient({ url: server.url, token: tokens.admin });
    expect(await admin.unreadCount()).toBe(1);
    await expect(admin.markRead("ntf_i1")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await admin.markRead("ntf_i3")).toEqual({ marked: 1, unread: 0 });
    expect((await admin.inbox({ unreadOnly: true })).length).toBe(0);
  });
});
