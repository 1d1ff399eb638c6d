import type { Db } from "../client.ts";
import type { ProjectStatus, Role } from "../generated/prisma/enums.ts";

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
