import { canonicalRepo, DomainError } from "@rhumbatron/core";
import { createProject, issueRepoToken, listProjects, projectName } from "@rhumbatron/db";
import { z } from "zod";
import { serverSettings } from "../settings.ts";
import { router, tenantProcedure } from "../trpc.ts";

export const projectsRouter = router({
  /** The tenant's projects, newest first, archived last. */
  list: tenantProcedure("viewer").query(({ ctx, input }) => listProjects(ctx.db, input.tenantId)),
  /** A new project, provisioned by the worker from the template at S0 (admins manage projects). */
  create: tenantProcedure("admin")
    .input(z.object({ name: projectName }))
    .mutation(({ ctx, input }) => createProject(ctx.db, { tenantId: input.tenantId, name: input.name }, ctx.services)),
  /**
   * A read token (600 s) and the URL to `git clone` the project's canonical source. The token is
   * shown once; push is never offered.
   */
  cloneAccess: tenantProcedure("viewer")
    .input(z.object({ projectId: z.string().min(1).max(200) }))
    .mutation(async ({ ctx, input }) => {
      const project = await ctx.db.project.findFirst({ where: { id: input.projectId, tenantId: input.tenantId } });
      if (!project) throw new DomainError("NOT_FOUND", `project ${input.projectId} not found`);
      if (project.status !== "active")
        throw new DomainError("PRECONDITION_FAILED", `the project is ${project.status}; its repository is not ready`);
      const repo = canonicalRepo(project.id);
      const token = await issueRepoToken(
        ctx.db,
        { repo, mode: "read", purpose: `clone by ${ctx.caller.userId}` },
        ctx.services.config,
        ctx.services.now(),
      );
      const base = new URL(serverSettings().RHUMBATRON_GIT_PUBLIC_URL);
      const url = `${base.protocol}//x:${token.token}@${base.host}${base.pathname.replace(/\/$/, "")}/${repo}.git`;
      return { url, expiresAt: token.expiresAt, command: `git clone ${url} ${project.name}` };
    }),
});
