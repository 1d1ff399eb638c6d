import type { ClientBase } from "./base.ts";

/** Projects from another repository: imported, or waiting for a push. */
export function importMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /**
     * A new project from another repository's history (docs/repositories.md): `from` is an
     * http(s) URL, a file:// URL or an absolute path the server can read, without credentials;
     * `branch` defaults to the source's HEAD branch; `submodules` fetches what its gitlinks name
     * (docs/repositories.md, Submodules). The project starts provisioning; getProject
     * says when it is active, or why it failed. Admin token.
     */
    async importProject(
      name: string,
      from: string,
      options: { branch?: string; credentials?: { username: string; password: string }; submodules?: boolean } = {},
    ): Promise<{ projectId: string }> {
      const t = await tenantId();
      return call(() =>
        trpc.projects.import.mutate({
          tenantId: t,
          name,
          from,
          ...(options.branch === undefined ? {} : { branch: options.branch }),
          // Sent once; the server seals them for the worker and never answers them (docs/repositories.md).
          ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
          ...(options.submodules ? { submodules: true } : {}),
        }),
      );
    },

    /**
     * A new empty project waiting for a `git push` of an existing history (docs/repositories.md,
     * Pushing into an
     * empty project). The answer holds, once, the push URL, a one-time token and the `git push`
     * command to run in the repository; pushAccess issues a new token while the project waits. Admin token.
     */
    async createProjectForPush(
      name: string,
    ): Promise<{ projectId: string; url: string; token: string; expiresAt: Date; command: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.createForPush.mutate({ tenantId: t, name }));
    },

    /** A new push token for a project still waiting for its push; the one before stops working. Admin token. */
    async pushAccess(projectId: string): Promise<{ url: string; token: string; expiresAt: Date; command: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.pushAccess.mutate({ tenantId: t, projectId }));
    },
  };
}
