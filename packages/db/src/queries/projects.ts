import type { Db } from "../client.ts";
import type { ProjectStatus, Role } from "../generated/prisma/enums.ts";
import type { Tx } from "../transaction.ts";

export interface ProjectSummary {
  id: string;
  name: string;
  status: ProjectStatus;
  canonicalGeneration: number;
  createdAt: Date;
  /** Why provisioning failed (status failed); null otherwise. */
  failureReason: string | null;
}

/** A tenant's projects, newest first. Archived projects are listed last. */
export async function listProjects(db: Db, tenantId: string): Promise<ProjectSummary[]> {
  const rows = await db.project.findMany({
    where: { tenantId },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    select: { id: true, name: true, status: true, canonicalGeneration: true, createdAt: true, failureReason: true },
  });
  return [...rows.filter((r) => r.status !== "archived"), ...rows.filter((r) => r.status === "archived")];
}

export interface TenantMembership {
  tenantId: string;
  slug: string;
  name: string;
  role: Role;
}

/** The tenants a user belongs to, with the user's role in each. */
export async function listMemberships(db: Db, userId: string): Promise<TenantMembership[]> {
  const rows = await db.membership.findMany({
    where: { userId },
    include: { tenant: true },
    orderBy: { tenant: { name: "asc" } },
  });
  return rows.map((r) => ({ tenantId: r.tenantId, slug: r.tenant.slug, name: r.tenant.name, role: r.role }));
}

export async function findUserByEmail(db: Db, email: string) {
  return db.user.findUnique({ where: { email }, select: { id: true, email: true, name: true } });
}

/** The tenant a project belongs to, or null when there is no such project. */
export async function tenantOfProject(db: Db, projectId: string): Promise<string | null> {
  const p = await db.project.findUnique({ where: { id: projectId }, select: { tenantId: true } });
  return p?.tenantId ?? null;
}

/** A project of this tenant (its ID, name, status and generation), or null: another tenant's reads as none. */
export async function projectInTenant(db: Db, tenantId: string, projectId: string) {
  return db.project.findFirst({
    where: { id: projectId, tenantId },
    select: { id: true, name: true, status: true, canonicalGeneration: true },
  });
}

/** A project's current generation number, or null when there is no such project. */
export async function canonicalGenerationOf(db: Db | Tx, projectId: string): Promise<number | null> {
  const p = await db.project.findUnique({ where: { id: projectId }, select: { canonicalGeneration: true } });
  return p?.canonicalGeneration ?? null;
}

/** Projects that have a canonical repository to read: not provisioning, failed or waiting for a push. */
export async function projectIdsWithRepository(db: Db): Promise<string[]> {
  const rows = await db.project.findMany({
    where: { status: { notIn: ["provisioning", "failed", "awaiting_push"] } },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** What provisioning reads of a project: where its first generation comes from. */
export async function projectSourceOf(db: Db, projectId: string) {
  return db.project.findUnique({
    where: { id: projectId },
    select: { id: true, status: true, sourceKind: true, sourceUrl: true, sourceBranch: true, sourceSubmodules: true },
  });
}

/** The newest build (or failure or purge) of a project's search index, or the built one of `tree`. */
export async function projectIndexRow(db: Db, projectId: string, o: { builtTree?: string } = {}) {
  return db.projectIndex.findFirst({
    where: o.builtTree === undefined ? { projectId } : { projectId, tree: o.builtTree, status: "built" },
    orderBy: { createdAt: "desc" },
    select: { status: true, generation: true, error: true, tree: true },
  });
}
