import type { AgentChoice } from "@rhumbatron/core";
import type { ClientBase } from "./base.ts";
import type { Project, ProjectChecks, ProjectDetail } from "./types.ts";

/** A project: list, show, checks, create, its Agent. */
export function projectMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    async listProjects(): Promise<Project[]> {
      const t = await tenantId();
      return call(() => trpc.projects.list.query({ tenantId: t }));
    },

    /** One project: its status, source (template or an imported URL and branch) and failure reason. */
    async getProject(projectId: string): Promise<ProjectDetail> {
      const t = await tenantId();
      return (await call(() => trpc.projects.overview.query({ tenantId: t, projectId }))).project;
    },

    /**
     * Where the project's checks come from at its canonical head (its checks file, detected, the
     * file's problems, or none), what they are, and the latest setup runs.
     */
    async projectChecks(projectId: string): Promise<ProjectChecks> {
      const t = await tenantId();
      return call(() => trpc.projects.checks.query({ tenantId: t, projectId }));
    },

    /** A new project from the built-in template (the demo shop) at S0; getProject says when it is active. Admin token. */
    async createProject(name: string): Promise<{ projectId: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.create.mutate({ tenantId: t, name }));
    },

    /**
     * The Agent that works the project's Tasks unless a Task names its own (docs/agents.md, Choosing the
     * Agent); null gives the worker's default. `changed` is false when it already was. Admin token.
     */
    async setProjectAgent(
      projectId: string,
      agent: AgentChoice | null,
    ): Promise<{ agent: AgentChoice | null; changed: boolean }> {
      const t = await tenantId();
      return call(() => trpc.projects.setAgent.mutate({ tenantId: t, projectId, agent }));
    },
  };
}
