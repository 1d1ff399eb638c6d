import { DomainError, type ReleaseTarget, releaseTargetSchema, sameReleaseTarget } from "@rhumbatron/core";
import type { Db } from "../client.ts";

export interface SetReleaseTargetResult {
  projectId: string;
  target: ReleaseTarget;
  /** False when the project already had this target: nothing was written. */
  changed: boolean;
}

/**
 * Sets where the project's future promotions are released (projects.release_target). A release
 * already started keeps the target it was started with (releases.target). Idempotent: the same
 * target again writes nothing. Another tenant's project is NOT_FOUND; an archived one has no
 * future promotions and is refused.
 */
export async function setReleaseTarget(
  db: Db,
  p: { tenantId: string; projectId: string; target: ReleaseTarget },
): Promise<SetReleaseTargetResult> {
  // The web has validated already; a caller from elsewhere gets the same messages.
  const parsed = releaseTargetSchema.safeParse(p.target);
  if (!parsed.success) throw new DomainError("INVALID_INPUT", parsed.error.issues.map((i) => i.message).join("; "));
  const target = parsed.data;
  const project = await db.project.findFirst({
    where: { id: p.projectId, tenantId: p.tenantId },
    select: { status: true, releaseTarget: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
  if (project.status === "archived") {
    throw new DomainError("PRECONDITION_FAILED", "the project is archived: it has no future promotions to release");
  }
  const current = releaseTargetSchema.safeParse(project.releaseTarget);
  if (current.success && sameReleaseTarget(current.data, target)) {
    return { projectId: p.projectId, target, changed: false };
  }
  await db.project.updateMany({ where: { id: p.projectId, tenantId: p.tenantId }, data: { releaseTarget: target } });
  return { projectId: p.projectId, target, changed: true };
}
