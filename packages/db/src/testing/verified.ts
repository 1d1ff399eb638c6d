import {
  buildVerificationPlan,
  defaultPolicyDocument,
  policyFromDocument,
  type RhumbatronConfig,
  type RiskTier,
} from "@rhumbatron/core";
import { shopChecks } from "@rhumbatron/core/testing";
import type { Db } from "../client.ts";
import { seedChange, seedProjects } from "./fixtures.ts";

export interface VerifiedCandidateOptions {
  /** `rejected`: every planned check failed instead. Default verified. */
  status?: "verified" | "rejected";
  riskTier?: RiskTier;
  candidateId?: string;
  tenantId?: string;
  /** The paths the plan is made for (default src/banner.ts). */
  paths?: string[];
  approvalRequired?: boolean;
  /** More of the Change's fields (it lands when ready, since when). */
  change?: { title?: string; landWhenReady?: boolean; landingSince?: Date };
}

/**
 * A Change (`verifying`) with a Candidate based on S0, planned under the project's default policy
 * v1, every planned check's Evidence passing on its composed tree (failing when rejected):
 * promotable while v1 is the active policy, the source probe finds its commit and, where the plan
 * asks for one, a person approved it.
 */
export async function seedVerifiedCandidate(
  db: Db,
  projectId: string,
  config: RhumbatronConfig,
  o: VerifiedCandidateOptions = {},
): Promise<{ changeId: string; candidateId: string }> {
  const status = o.status ?? "verified";
  const riskTier = o.riskTier ?? "low";
  await seedProjects(db, [projectId], o.tenantId);
  const changeId = `chg_${projectId}`;
  const candidateId = o.candidateId ?? `cand_${projectId}`;
  await seedChange(db, projectId, changeId);
  await db.change.update({ where: { id: changeId }, data: { status: "verifying", riskTier, ...o.change } });
  await db.canonicalGeneration.create({ data: { projectId, generation: 0, commit: "c0", tree: "t0" } });
  const plan = buildVerificationPlan(
    { riskTier, invariants: [], goals: {} },
    o.paths ?? ["src/banner.ts"],
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
      ...(o.approvalRequired ? { approvalRequired: true } : {}),
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
        // A performance check passes with its metric below the bound.
        metrics: check.id === "performance" ? { p95Ms: 1 } : {},
        completedAt: new Date(),
      },
    });
  }
  return { changeId, candidateId };
}
