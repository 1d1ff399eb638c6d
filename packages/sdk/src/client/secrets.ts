import { secretNameSchema, setSecretInput } from "@rhumbatron/core";
import { formatIssues, RhumbatronError } from "../errors.ts";
import type { ClientBase } from "./base.ts";
import type { SetSecretResult, TenantSecret } from "./types.ts";

/** The tenant's secrets (admin role). */
export function secretMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /** The tenant's secrets (admin role): names, when and by whom each was set; never a value. */
    async listSecrets(): Promise<TenantSecret[]> {
      const t = await tenantId();
      return call(() => trpc.secrets.list.query({ tenantId: t }));
    },

    /**
     * Sets a tenant secret, or replaces its value (admin role; docs/agents.md, Secrets). Checked here with
     * the server's own schema first: a bad name or value throws BAD_REQUEST and sends nothing. The
     * value is never sent back.
     */
    async setSecret(name: string, value: string): Promise<SetSecretResult> {
      const parsed = setSecretInput.safeParse({ name, value });
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
        throw new RhumbatronError("BAD_REQUEST", `${formatIssues(issues)} (nothing was sent)`, { issues });
      }
      const t = await tenantId();
      return call(() => trpc.secrets.set.mutate({ tenantId: t, ...parsed.data }));
    },

    /** Deletes a tenant secret (admin role); NOT_FOUND when the tenant has none of that name. */
    async deleteSecret(name: string): Promise<{ name: string }> {
      const parsed = secretNameSchema.safeParse(name);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: "name", message: i.message }));
        throw new RhumbatronError("BAD_REQUEST", `${formatIssues(issues)} (nothing was sent)`, { issues });
      }
      const t = await tenantId();
      return call(() => trpc.secrets.delete.mutate({ tenantId: t, name: parsed.data }));
    },
  };
}
