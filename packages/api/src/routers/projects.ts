import {
  agentChoiceSchema,
  branchName,
  canonicalRepo,
  DomainError,
  idSchema,
  importCredentialsSchema,
  importFromSchema,
  releaseTargetSchema,
  safeText,
} from "@rhumbatron/core";
import {
  archiveProject,
  createProject,
  createProjectForPush,
  type Db,
  getProjectOverview,
  importProject,
  issueRepoToken,
  listProjectIndexes,
  listProjects,
  listReleases,
  projectIndexRow,
  projectInTenant,
  projectName,
  projectOfTenant,
  reissuePushToken,
  searchProjectIndex,
  setProjectAgent,
  setReleaseTarget,
} from "@rhumbatron/db";
import { z } from "zod";
import { projectFeed } from "../project-feed.ts";
import { router, type Services, tenantProcedure } from "../trpc.ts";

const projectId = idSchema;

export const projectsRouter = router({
  /** The tenant's projects, newest first, archived last. */
  list: tenantProcedure("viewer").query(({ ctx, input }) => listProjects(ctx.db, input.tenantId)),
  /** A new project, provisioned by the worker from the template at S0 (admins manage projects). */
  create: tenantProcedure("admin")
    .input(z.object({ name: projectName }))
    .mutation(({ ctx, input }) => createProject(ctx.db, { tenantId: input.tenantId, name: input.name }, ctx.services)),
  /**
   * A new project whose generation 0 is another repository's history (docs/repositories.md):
   * `from` is an http(s) URL, a file:// URL or an absolute path the worker can read,
   * never with credentials in it; `credentials` (user name and password or token) go separately, for an
   * http(s) source only, sealed for the worker and deleted once provisioning ends, never answered or
   * logged. `branch` defaults to the source's HEAD branch. `submodules` (off by default) has the
   * worker fetch what the source's gitlinks name, from the URLs its .gitmodules gives, read as
   * `from` is (docs/repositories.md, Submodules). Anything else is refused
   * (BAD_REQUEST, naming what is accepted) before anything is written. The worker's project.provision
   * clones it; a source it cannot import leaves the project failed with the reason.
   */
  import: tenantProcedure("admin")
    .input(
      z.object({
        name: projectName,
        from: importFromSchema,
        branch: branchName.optional(),
        credentials: importCredentialsSchema.optional(),
        submodules: z.boolean().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      importProject(
        ctx.db,
        {
          tenantId: input.tenantId,
          name: input.name,
          from: input.from,
          branch: input.branch ?? null,
          credentials: input.credentials ?? null,
          submodules: input.submodules ?? false,
        },
        ctx.services,
      ),
    ),
  /**
   * A new empty project waiting for a `git push` of an existing history (docs/repositories.md,
   * Pushing into an
   * empty project). Answers ONCE the push URL and a one-time token (only its hash is kept, valid for
   * `source.pushTokenTtlSeconds`), and the command to run; the push that arrives starts provisioning.
   */
  createForPush: tenantProcedure("admin")
    .input(z.object({ name: projectName }))
    .mutation(async ({ ctx, input }) => {
      const { projectId, ...issued } = await createProjectForPush(
        ctx.db,
        { tenantId: input.tenantId, name: input.name, actorId: ctx.caller.userId },
        ctx.services,
      );
      return { projectId, ...pushAccess(ctx.services, projectId, issued) };
    }),
  /**
   * A new push token for a project still waiting for its push; the one before stops working
   * (PRECONDITION_FAILED once the project no longer waits). Shown once, like the first.
   */
  pushAccess: tenantProcedure("admin")
    .input(z.object({ projectId }))
    .mutation(async ({ ctx, input }) => {
      const issued = await reissuePushToken(
        ctx.db,
        { tenantId: input.tenantId, projectId: input.projectId, actorId: ctx.caller.userId },
        ctx.services,
      );
      return pushAccess(ctx.services, input.projectId, issued);
    }),
  /**
   * Archives the project (admins manage projects): status archived, project.archived, and
   * project.cleanup to delete its repositories and stored source. A repeat changes nothing.
   */
  archive: tenantProcedure("admin")
    .input(z.object({ projectId }))
    .mutation(({ ctx, input }) =>
      archiveProject(
        ctx.db,
        { tenantId: input.tenantId, projectId: input.projectId, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
  /** The project, its canonical generations with the Candidate each came from, and its view's counts. */
  overview: tenantProcedure("viewer")
    .input(z.object({ projectId }))
    .query(({ ctx, input }) => getProjectOverview(ctx.db, { tenantId: input.tenantId, projectId: input.projectId })),
  /**
   * The project's live feed (project_events) over server-sent events: recent rows first, then each
   * new one. `lastEventId` is the feed ID to resume after (EventSource sends it on reconnect).
   * The project is checked before the stream opens, so another tenant's project is NOT_FOUND.
   */
  events: tenantProcedure("viewer")
    .input(
      z.object({
        projectId,
        lastEventId: z
          .string()
          .regex(/^\d{1,19}$/)
          .nullish(),
      }),
    )
    .subscription(async ({ ctx, input, signal }) => {
      const project = await projectOfTenant(ctx.db, input.tenantId, input.projectId);
      const after = input.lastEventId ? BigInt(input.lastEventId) : null;
      return projectFeed(ctx.db, project.id, after, signal);
    }),
  /**
   * A read token (600 s) and the URL to `git clone` the project's canonical source. The token is
   * shown once; push is never offered.
   */
  cloneAccess: tenantProcedure("viewer")
    .input(z.object({ projectId }))
    .mutation(async ({ ctx, input }) => {
      const project = await projectInTenant(ctx.db, input.tenantId, input.projectId);
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
      const base = new URL(ctx.services.gitPublicUrl);
      const url = `${base.protocol}//x:${token.token}@${base.host}${base.pathname.replace(/\/$/, "")}/${repo}.git`;
      return { url, expiresAt: token.expiresAt, command: `git clone ${url} ${project.name}` };
    }),
  /** The project's release target (future promotions) and its releases, newest generation first. */
  releases: tenantProcedure("viewer")
    .input(z.object({ projectId, limit: z.number().int().min(1).max(200).optional() }))
    .query(({ ctx, input }) => listReleases(ctx.db, input)),
  /**
   * Where the project's future promotions are released: a folder on the worker host (absolute path,
   * or none for `<data dir>/releases/<project>/<generation>/`), a webhook (http or https), or none.
   * Releases already started keep their target. Admins only; the same target again writes nothing.
   */
  setReleaseTarget: tenantProcedure("admin")
    .input(z.object({ projectId, target: releaseTargetSchema }))
    .mutation(({ ctx, input }) => setReleaseTarget(ctx.db, input)),
  /**
   * The Agent that works the project's Tasks unless a Task names its own (docs/agents.md, Choosing the
   * Agent): scripted, model, or a command run in the Sandbox; null gives the worker's default.
   * Admins only; runs already started keep theirs; the same choice again writes nothing.
   */
  setAgent: tenantProcedure("admin")
    .input(z.object({ projectId, agent: agentChoiceSchema.nullable() }))
    .mutation(({ ctx, input }) => setProjectAgent(ctx.db, input)),
  /** The search index's builds, purges and failures (project_indexes), latest first. */
  indexes: tenantProcedure("viewer")
    .input(z.object({ projectId, limit: z.number().int().min(1).max(100).optional() }))
    .query(({ ctx, input }) => listProjectIndexes(ctx.db, input)),
  /**
   * Lines of the newest indexed generation holding every word of the query (each word a prefix of
   * an identifier or word, case-insensitive). Without a built index: `indexed: false` and why.
   */
  search: tenantProcedure("viewer")
    .input(
      z.object({
        projectId,
        query: safeText(200).trim().min(1),
        limit: z.number().int().min(1).max(200).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const project = await projectOfTenant(ctx.db, input.tenantId, input.projectId);
      const opts = input.limit === undefined ? {} : { limit: input.limit };
      const result = await searchProjectIndex(ctx.services.blobs, ctx.db, project.id, input.query, opts);
      if (result) return { indexed: true as const, ...result };
      return { indexed: false as const, message: await notIndexedMessage(ctx.db, project.id) };
    }),
});

/**
 * The push URL on the worker's git endpoint (RHUMBATRON_GIT_PUBLIC_URL), the token and the command
 * to run in the repository to push: its checked-out branch becomes the project's main.
 */
function pushAccess(services: Services, projectId: string, issued: { token: string; expiresAt: Date }) {
  const base = new URL(services.gitPublicUrl);
  const path = `${base.pathname.replace(/\/$/, "")}/push/${projectId}.git`;
  const url = `${base.protocol}//${base.host}${path}`;
  const withToken = `${base.protocol}//x:${issued.token}@${base.host}${path}`;
  return {
    url,
    token: issued.token,
    expiresAt: issued.expiresAt,
    command: `git push ${withToken} HEAD:refs/heads/main`,
  };
}

/** Why a project has no index to search: never built, its last build failed, purged on archive, or unreadable. */
async function notIndexedMessage(db: Db, projectId: string): Promise<string> {
  const last = await projectIndexRow(db, projectId);
  if (last?.status === "failed") return `No search index: the last build (S${last.generation}) failed: ${last.error}`;
  if (last?.status === "purged") return "No search index: it was removed when the project was archived.";
  // Built, but its blob is not in this server's blob store (a web host that does not share the worker's folder).
  if (last?.status === "built") return `The search index of S${last.generation} is not readable from this server.`;
  return "No search index yet: the index is built after each promotion.";
}
