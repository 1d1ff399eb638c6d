import { randomUUID } from "node:crypto";
import { commandIds, DomainError, type ImportCredentials, parseImportSource } from "@rhumbatron/core";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import { z } from "zod";
import type { Db } from "../client.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { storeImportCredentials } from "./import-credentials.ts";

export const projectName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and '-', starting with a letter or digit");

/** An imported project's source: the URL or absolute path (no credentials) and the branch (none: HEAD's). */
export interface ImportedSource {
  url: string;
  branch?: string | null;
  /** Fetch what its gitlinks name (an admin allowed it); off by default. */
  submodules?: boolean;
}

/**
 * A new project starts `provisioning`; project.provision (integration queue) creates its canonical
 * repository from the template at S0 and makes it `active`. Both in one transaction: the command
 * is sent if and only if the project row commits.
 */
export async function createProjectIn(
  ctx: TxContext,
  p: { tenantId: string; name: string; source?: ImportedSource | "push" },
  deps: EnqueueDeps,
): Promise<string> {
  const name = projectName.parse(p.name);
  const taken = await ctx.tx.project.findUnique({
    where: { tenantId_name: { tenantId: p.tenantId, name } },
    select: { id: true },
  });
  if (taken) throw new DomainError("CONFLICT", `a project named ${name} already exists in this tenant`);
  const projectId = `proj_${randomUUID()}`;
  if (p.source === "push") {
    // Waits for its push (./push-project.ts): project.provision is sent by the push that arrives.
    await ctx.tx.project.create({
      data: { id: projectId, tenantId: p.tenantId, name, status: "awaiting_push", sourceKind: "push" },
    });
    return projectId;
  }
  const source = p.source
    ? {
        sourceKind: "import",
        sourceUrl: p.source.url,
        sourceBranch: p.source.branch ?? null,
        sourceSubmodules: p.source.submodules ?? false,
      }
    : { sourceKind: "template" };
  await ctx.tx.project.create({
    data: { id: projectId, tenantId: p.tenantId, name, status: "provisioning", ...source },
  });
  await enqueueCommand(
    ctx,
    { commandId: commandIds.provision(projectId), commandType: "project.provision", projectId, payload: {} },
    deps,
  );
  return projectId;
}

export async function createProject(
  db: Db,
  p: { tenantId: string; name: string },
  deps: EnqueueDeps,
): Promise<{ projectId: string }> {
  return withTransaction(db, async (ctx) => ({ projectId: await createProjectIn(ctx, p, deps) }));
}

/**
 * A project whose generation 0 is another repository's history (docs/repositories.md):
 * the row keeps the source (kind import, the URL without credentials, the branch) and
 * project.provision clones it. `from` is read again here, so no caller can store what the API refuses.
 */
export async function importProject(
  db: Db,
  p: {
    tenantId: string;
    name: string;
    from: string;
    branch?: string | null;
    credentials?: ImportCredentials | null;
    submodules?: boolean;
  },
  deps: EnqueueDeps & { credentialSecret?: string },
): Promise<{ projectId: string }> {
  const parsed = parseImportSource(p.from);
  if (!parsed.ok) throw new DomainError("INVALID_INPUT", parsed.message);
  const credentials = p.credentials ?? null;
  if (credentials && parsed.source.kind !== "http")
    throw new DomainError(
      "INVALID_INPUT",
      "credentials are only used for an http:// or https:// source; a folder or file:// source takes none",
    );
  const source = { url: parsed.source.url, branch: p.branch ?? null, submodules: p.submodules ?? false };
  return withTransaction(db, async (ctx) => {
    const projectId = await createProjectIn(ctx, { tenantId: p.tenantId, name: p.name, source }, deps);
    // Sealed, in their own row, deleted when provisioning ends (./import-credentials.ts).
    if (credentials) await storeImportCredentials(ctx, projectId, credentials, deps.credentialSecret);
    return { projectId };
  });
}
