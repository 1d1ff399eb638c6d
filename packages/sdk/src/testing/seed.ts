// The API's router fixtures: tenants Acme (one user per role, projects shop and blog) and Other.
import { ACME, seedTenants } from "@rhumbatron/api/testing";
import { createApiToken, type Db, type Role } from "@rhumbatron/db";
import type { Prisma } from "@rhumbatron/db/testing";

export { ACME, OTHER } from "@rhumbatron/api/testing";

/** Acme's active project (the demo shop). */
export const SHOP = "proj_00000000-0000-4000-8000-00000000a001";

/** Seeds the fixtures' tenants and returns an API token secret for Acme's user of each role. */
export async function seedWithTokens(db: Db): Promise<Record<Role, string>> {
  await seedTenants(db);
  const tokens = {} as Record<Role, string>;
  for (const role of ["viewer", "member", "approver", "operator", "admin"] as const) {
    const { secret } = await createApiToken(
      db,
      { tenantId: ACME.tenantId, userId: `usr_acme_${role}`, name: `sdk test ${role}`, role },
      new Date(),
    );
    tokens[role] = secret;
  }
  return tokens;
}

/**
 * A Change of the shop with one completed Task and its ChangeSet, and a Candidate composed from it
 * in `status` (with a plan, a composed tree and one passing build record once it is verified).
 */
export async function seedCandidate(
  db: Db,
  c: { changeId: string; candidateId: string; status: "created" | "verified" | "rejected" | "stale" },
) {
  await db.change.create({
    data: {
      id: c.changeId,
      projectId: SHOP,
      title: `Change ${c.changeId}`,
      riskTier: "high",
      clientRequestId: c.changeId,
    },
  });
  await db.task.create({
    data: { id: `task_${c.changeId}`, changeId: c.changeId, key: "a", title: "a", state: "completed" },
  });
  const { rows, tree } = composedCandidate(db, { ...c, taskId: `task_${c.changeId}` });
  await db.$transaction(rows);
  return { tree };
}

/**
 * The writes that compose a Candidate of an existing Change from its Task's ChangeSet, as the
 * worker would leave them (for a `db.$transaction`, so a reader sees all of them or none).
 */
export function composedCandidate(
  db: Db,
  c: {
    changeId: string;
    taskId: string;
    candidateId: string;
    status: "created" | "verified" | "rejected" | "stale";
  },
) {
  const tree = "a".repeat(40);
  const verified = c.status === "verified";
  const rows: Prisma.PrismaPromise<unknown>[] = [
    db.changeSet.create({
      data: {
        id: `cs_${c.changeId}`,
        changeId: c.changeId,
        taskId: c.taskId,
        runId: `run_${c.changeId}`,
        agentId: "agt",
        fork: "ws-x",
        baseCommit: "c0",
        commit: "c1",
        patchRef: `source/p/patches/changesets/cs_${c.changeId}.patch`,
      },
    }),
    db.candidate.create({
      data: {
        id: c.candidateId,
        projectId: SHOP,
        changeId: c.changeId,
        compositionKey: `k_${c.candidateId}`,
        baseGeneration: 0,
        baseCommit: "c0",
        changeSetIds: [`cs_${c.changeId}`],
        status: c.status,
        ...(verified
          ? {
              composedCommit: "b".repeat(40),
              composedTree: tree,
              approvalRequired: true,
              plan: {
                policyId: "policy-1",
                policyVersion: 1,
                riskTier: "high",
                checks: [
                  { id: "build", kind: "build", timeoutSeconds: 120, argv: ["npm", "run", "build"], reason: "r" },
                ],
                humanGate: true,
                humanGateReasons: ["policy-1 gates high risk"],
              },
            }
          : {}),
      },
    }),
  ];
  if (verified) {
    rows.push(
      db.evidence.create({
        data: {
          id: `ev_${c.candidateId}`,
          candidateId: c.candidateId,
          checkId: "build",
          kind: "build",
          status: "pass",
          coverage: "checked_supported",
          durationMs: 900,
          timeoutSeconds: 120,
          completedAt: new Date(),
        },
      }),
    );
  }
  return { rows, tree };
}
