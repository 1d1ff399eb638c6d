import { DEV_DEMO_PASSWORD, loadConfig } from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { setUserPassword } from "../auth/passwords.ts";
import type { Db } from "../client.ts";
import { withTransaction } from "../transaction.ts";
import { createProjectIn } from "./create-project.ts";

function defaultDeps(): EnqueueDeps {
  return { config: loadConfig("dev"), nudger: pgNotifyNudger, now: () => new Date() };
}

export const DEMO = {
  tenantId: "ten_demo",
  tenantSlug: "demo",
  tenantName: "Demo",
  userId: "usr_demo_admin",
  userEmail: "admin@demo.rhumbatron.local",
  userName: "Demo Admin",
  projectName: "demo-shop",
} as const;

export interface SeedResult {
  tenantId: string;
  userId: string;
  projectId: string;
  created: boolean;
  /** The demo admin's password (set or confirmed by this run), or null when none was given. */
  password: string | null;
}

export interface SeedOptions {
  /** The demo admin's password (`demoPassword(settings)`); null: leave the credential as it is. */
  password?: string | null;
}

/**
 * Seeds the embedded default's demo tenant, its admin user with a password, and one project (sent to
 * provisioning). Idempotent: a second run finds the rows and changes nothing (so `npm start` keeps the
 * data it had). The password is the one exception: if the stored one no longer matches the configured
 * one, it is set again, so the password `npm start` prints always works.
 */
export async function seedDemo(
  db: Db,
  deps: EnqueueDeps = defaultDeps(),
  options: SeedOptions = {},
): Promise<SeedResult> {
  const password = options.password === undefined ? DEV_DEMO_PASSWORD : options.password;
  const seeded = await withTransaction(db, async (ctx) => {
    const { tx } = ctx;
    await tx.tenant.upsert({
      where: { id: DEMO.tenantId },
      create: { id: DEMO.tenantId, slug: DEMO.tenantSlug, name: DEMO.tenantName },
      update: {},
    });
    await tx.user.upsert({
      where: { id: DEMO.userId },
      create: { id: DEMO.userId, email: DEMO.userEmail, name: DEMO.userName, emailVerified: true },
      update: {},
    });
    await tx.membership.upsert({
      where: { tenantId_userId: { tenantId: DEMO.tenantId, userId: DEMO.userId } },
      create: { tenantId: DEMO.tenantId, userId: DEMO.userId, role: "admin" },
      update: {},
    });
    const existing = await tx.project.findUnique({
      where: { tenantId_name: { tenantId: DEMO.tenantId, name: DEMO.projectName } },
      select: { id: true },
    });
    if (existing) return { tenantId: DEMO.tenantId, userId: DEMO.userId, projectId: existing.id, created: false };
    // Provisioned by the worker like any new project: its repository is seeded from the template.
    const projectId = await createProjectIn(ctx, { tenantId: DEMO.tenantId, name: DEMO.projectName }, deps);
    return { tenantId: DEMO.tenantId, userId: DEMO.userId, projectId, created: true };
  });
  // After the commit: hashing takes a while on purpose and needs no transaction (the user row exists).
  if (password !== null) await setUserPassword(db, DEMO.userId, password);
  return { ...seeded, password };
}
