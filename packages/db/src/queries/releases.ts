import { type ReleaseTarget, releaseTargetSchema } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { ReleaseStep } from "../release/release-state.ts";
import { projectOfTenant } from "./project-overview.ts";

export interface ReleaseEntry {
  id: string;
  generation: number;
  candidateId: string | null;
  commit: string;
  tree: string;
  /** The target the release was started with (the project's target at promotion); null if unreadable. */
  target: ReleaseTarget | null;
  status: "running" | "succeeded" | "failed";
  steps: ReleaseStep[];
  output: unknown;
  /** A failed release's error; on a running one, the last attempt's (it is being retried). */
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const readTarget = (raw: unknown): ReleaseTarget | null => {
  const parsed = releaseTargetSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
};

/**
 * The project's release target (what future promotions release to) and its releases, newest
 * generation first. Another tenant's project is NOT_FOUND.
 */
export async function listReleases(db: Db, q: { tenantId: string; projectId: string; limit?: number }) {
  const project = await projectOfTenant(db, q.tenantId, q.projectId);
  const [row, rows] = await Promise.all([
    db.project.findUniqueOrThrow({ where: { id: project.id }, select: { releaseTarget: true } }),
    db.release.findMany({
      where: { projectId: project.id },
      orderBy: [{ generation: "desc" }, { createdAt: "desc" }],
      take: q.limit ?? 50,
    }),
  ]);
  const releases: ReleaseEntry[] = rows.map((r) => ({
    id: r.id,
    generation: r.generation,
    candidateId: r.candidateId,
    commit: r.commit,
    tree: r.tree,
    target: readTarget(r.target),
    status: r.status as ReleaseEntry["status"],
    steps: Array.isArray(r.steps) ? (r.steps as unknown as ReleaseStep[]) : [],
    output: r.output,
    error: r.error,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }));
  return { target: readTarget(row.releaseTarget), releases };
}

export interface ProjectIndexEntry {
  id: string;
  generation: number;
  tree: string | null;
  status: "built" | "failed" | "purged";
  files: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The project's search index builds, purges and failures (project_indexes), latest first. */
export async function listProjectIndexes(
  db: Db,
  q: { tenantId: string; projectId: string; limit?: number },
): Promise<ProjectIndexEntry[]> {
  const project = await projectOfTenant(db, q.tenantId, q.projectId);
  const rows = await db.projectIndex.findMany({
    where: { projectId: project.id },
    orderBy: [{ createdAt: "desc" }, { generation: "desc" }],
    take: q.limit ?? 20,
  });
  return rows.map((r) => ({
    id: r.id,
    generation: r.generation,
    tree: r.tree,
    status: r.status as ProjectIndexEntry["status"],
    files: r.files,
    error: r.error,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }));
}
