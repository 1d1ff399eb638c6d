import {
  canonicalPolicyDocument,
  changedPolicyFields,
  DEFAULT_POLICY,
  DomainError,
  defaultPolicyDocument,
  type PolicyDocument,
  policyDocumentProblems,
  policyDocumentSchema,
  policyFromDocument,
  type RhumbatronConfig,
  type VerificationPolicy,
} from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { projectEvent } from "../events/factory.ts";
import { withProjectRoot } from "../events/owners.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { projectOfTenant } from "../queries/project-overview.ts";
import type { TxContext } from "../transaction.ts";

/**
 * A project's verification policy (docs/verification.md, The project's policy), versioned in
 * project_policies:
 * the highest version is the active one, and a project without rows runs version 1, the defaults
 * (nothing is written to read it). The plan records the version it was made under; approval and
 * promotion read the active one, so a Candidate planned under an older version is blocked.
 */
type Reader = Db | TxContext["tx"];

export interface ProjectPolicyVersion {
  projectId: string;
  /** The policy's name in plans and reasons (`policy-1`); the version tells its edits apart. */
  policyId: string;
  version: number;
  document: PolicyDocument;
  /** Who made this version; null for version 1, the defaults. */
  createdBy: string | null;
  createdAt: Date | null;
  /** Version 1 before any edit: the defaults, not stored. */
  implicit: boolean;
}

function versionOf(row: {
  projectId: string;
  version: number;
  document: unknown;
  createdBy: string;
  createdAt: Date;
}): ProjectPolicyVersion {
  const parsed = policyDocumentSchema.safeParse(row.document);
  // Only updateProjectPolicy writes rows, after the same schema accepted them.
  if (!parsed.success) {
    throw new DomainError(
      "INVALID_CONFIG",
      `policy v${row.version} of project ${row.projectId} cannot be read: ${policyDocumentProblems(parsed.error)}`,
    );
  }
  return { ...row, policyId: DEFAULT_POLICY.id, document: parsed.data, implicit: false };
}

const defaults = (projectId: string, config: RhumbatronConfig): ProjectPolicyVersion => ({
  projectId,
  policyId: DEFAULT_POLICY.id,
  version: 1,
  document: defaultPolicyDocument(config),
  createdBy: null,
  createdAt: null,
  implicit: true,
});

/** The project's active policy version (inside a transaction, `db` is its client). */
export async function activeProjectPolicy(
  db: Reader,
  projectId: string,
  config: RhumbatronConfig,
): Promise<ProjectPolicyVersion> {
  const row = await db.projectPolicy.findFirst({ where: { projectId }, orderBy: { version: "desc" } });
  return row ? versionOf(row) : defaults(projectId, config);
}

/** The active policy as the plan, the gate, approval and promotion read it. */
export async function activeVerificationPolicy(
  db: Reader,
  projectId: string,
  config: RhumbatronConfig,
): Promise<VerificationPolicy> {
  const p = await activeProjectPolicy(db, projectId, config);
  return policyFromDocument(p.document, p.version);
}

/** The tenant's project's active policy; another tenant's project is NOT_FOUND. */
export async function getProjectPolicy(
  db: Db,
  q: { tenantId: string; projectId: string },
  config: RhumbatronConfig,
): Promise<ProjectPolicyVersion> {
  const project = await projectOfTenant(db, q.tenantId, q.projectId);
  return activeProjectPolicy(db, project.id, config);
}

/** Every version, newest first; version 1 (the defaults) is listed last until an edit stores more. */
export async function listProjectPolicyVersions(
  db: Db,
  q: { tenantId: string; projectId: string; limit?: number },
  config: RhumbatronConfig,
): Promise<ProjectPolicyVersion[]> {
  const project = await projectOfTenant(db, q.tenantId, q.projectId);
  const limit = q.limit ?? 50;
  const rows = await db.projectPolicy.findMany({
    where: { projectId: project.id },
    orderBy: { version: "desc" },
    take: limit,
  });
  const versions = rows.map(versionOf);
  const reachesV1 = versions.length < limit && !versions.some((v) => v.version === 1);
  return reachesV1 ? [...versions, defaults(project.id, config)] : versions;
}

export interface UpdateProjectPolicyResult {
  projectId: string;
  policyId: string;
  version: number;
  previousVersion: number;
  /** False when the document equals the active one: no version and no Event were written. */
  changed: boolean;
  /** The top-level fields that differ from the previous version. */
  changedFields: string[];
  document: PolicyDocument;
}

/**
 * An admin's edit of the project's policy: in one transaction holding the project row (promotion's
 * compare-and-swap holds it too, so an edit and a promotion never interleave), version n + 1 and
 * policy.updated. `expectedVersion` is the version the admin edited: another edit landed first ->
 * CONFLICT, nothing written. A document equal to the active one writes nothing. A bad document is
 * INVALID_INPUT naming the field; an archived project is refused (it plans nothing any more).
 */
export async function updateProjectPolicy(
  db: Db,
  p: { tenantId: string; projectId: string; actorId: string; document: unknown; expectedVersion?: number },
  deps: EnqueueDeps,
): Promise<UpdateProjectPolicyResult> {
  // The web has validated already; a caller from elsewhere gets the same words.
  const parsed = policyDocumentSchema.safeParse(p.document);
  if (!parsed.success) {
    throw new DomainError("INVALID_INPUT", `the policy is invalid: ${policyDocumentProblems(parsed.error)}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
    });
  }
  const document = canonicalPolicyDocument(parsed.data);
  return withProjectRoot<UpdateProjectPolicyResult>(db, p.projectId, deps, async (ctx, root) => {
    // Another tenant's project is answered exactly like a missing one.
    if (root.tenantId !== p.tenantId) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
    const project = await ctx.tx.project.findUniqueOrThrow({ where: { id: p.projectId }, select: { status: true } });
    if (project.status === "archived") {
      throw new DomainError(
        "PRECONDITION_FAILED",
        "the project is archived: no Candidate will be planned under its policy",
      );
    }
    const current = await activeProjectPolicy(ctx.tx, p.projectId, deps.config);
    if (p.expectedVersion !== undefined && p.expectedVersion !== current.version) {
      throw new DomainError(
        "CONFLICT",
        `the policy is at version ${current.version}, not ${p.expectedVersion}: another edit landed first; reload it and edit again`,
        { currentVersion: current.version },
      );
    }
    const changed = changedPolicyFields(current.document, document);
    const result = { projectId: p.projectId, policyId: current.policyId, document, changedFields: changed };
    if (changed.length === 0) {
      return {
        result: { ...result, version: current.version, previousVersion: current.version, changed: false },
        events: [],
      };
    }
    const version = current.version + 1;
    const now = deps.now();
    await ctx.tx.projectPolicy.create({
      data: {
        projectId: p.projectId,
        version,
        document: document as Prisma.InputJsonValue,
        createdBy: p.actorId,
        createdAt: now,
      },
    });
    const event = projectEvent(root, "policy.updated", {
      actor: { kind: "user", id: p.actorId },
      now,
      payload: { policyId: current.policyId, version, previousVersion: current.version, changed },
    });
    return { result: { ...result, version, previousVersion: current.version, changed: true }, events: [event] };
  });
}
