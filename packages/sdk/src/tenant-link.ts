import { TRPCClientError, type TRPCLink } from "@trpc/client";
import { observable, type Unsubscribable } from "@trpc/server/observable";
import type { AppRouter } from "./router.ts";

/**
 * Fills in the tenant a call through the raw client (`rbt.trpc`) leaves out. Every procedure but
 * `tenants.mine` acts in one tenant, and the credentials already say which (a token has exactly
 * one; `tenant` chooses among a person's memberships), so `rbt.trpc.landing.queue.query({ projectId })`
 * is sent with the token's `tenantId`. An input that names a tenant is sent as it is, and so is a call
 * without an object input.
 */
export function tenantLink(tenantId: () => Promise<string>): TRPCLink<AppRouter> {
  return () =>
    ({ op, next }) =>
      observable((observer) => {
        const input = op.input;
        if (!isRecord(input) || input.tenantId !== undefined) return next(op).subscribe(observer);
        let sub: Unsubscribable | undefined;
        let stopped = false;
        tenantId().then(
          (t) => {
            if (!stopped) sub = next({ ...op, input: { ...input, tenantId: t } }).subscribe(observer);
          },
          (err: unknown) => observer.error(TRPCClientError.from(err instanceof Error ? err : new Error(String(err)))),
        );
        return () => {
          stopped = true;
          sub?.unsubscribe();
        };
      });
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype;
}
