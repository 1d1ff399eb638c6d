import {
  buildVerificationPlan,
  defaultPolicyDocument,
  policyFromDocument,
  type RhumbatronConfig,
} from "@rhumbatron/core";
import { shopChecks } from "@rhumbatron/core/testing";
import type { Db } from "../client.ts";
import { seedChange, seedProjects } from "./fixtures.ts";

/**
 * A Candidate of a low-risk Change (`verifying`), planned under the project's default policy v1,
 * every planned check's Evidence passing on its composed tree (failing when `status` is
 * `rejected`), based on S0: promotable while v1 is the active policy and the source probe finds
 * its commit.
 */
export async function seedVerifiedCandidate(
  db: Db,
  projectId: string,
  config: RhumbatronConfig,
  status: "verified" | "rejected" = "verified",
): Promise<{ changeId: string; candidateId: string }> {
  await seedProjects(db, [projectId]);
  const changeId = `chg_${projectId}`;
  const candidateId = `cand_${projectId}`;
  await seedChange(db, projectId, changeId);
  await db.change.update({ where: { id: changeId }, data: { status: "verifying" } });
  await db.canonicalGeneration.create({ data: { projectId, generation: 0, commit: "c0", tree: "t0" } });
  const plan = buildVerificationPlan(
    { riskTier: "low", invariants: [], goals: {} },
    ["src/banner.ts"],
    policyFromDocument(defaultPolicyDocument(config), 1),
    config,
    shopChecks(),
  );
  await db.candidate.create({
    data: {
      id: candidateId,
      projectId,
      changeId,
      compositionKey: candidateId,
      baseGeneration: 0,
      baseCommit: "c0",
      status,
      composedCommit: "c1",
      composedTree: "t1",
      plan: JSON.parse(JSON.stringify(plan)),
    },
  });
  for (const check of plan.checks) {
    await db.evidence.create({
      data: {
        id: `ev_${projectId}_${check.id}`,
        candidateId,
        checkId: check.id,
        kind: check.kind,
        status: status === "verified" ? "pass" : "fail",
        coverage: "checked_supported",
        durationMs: 10,
        timeoutSeconds: check.timeoutSeconds,
        completedAt: new Date(),
      },
    });
  }
  return { changeId, candidateId };
}
