import { type Caller, resolveCaller } from "@rhumbatron/api";
import type { TenantMembership } from "@rhumbatron/db";
import { headers } from "next/headers";
import { cache } from "react";
import { authFor } from "./auth.ts";
import { getDb } from "./db.ts";

/** What the page shell shows: who is signed in and which tenant they are working in. */
export type ShellState =
  | { kind: "ready"; caller: Caller; tenant: TenantMembership }
  | { kind: "no-tenant"; caller: Caller }
  | { kind: "signed-out" }
  | { kind: "unavailable" };

/**
 * Resolved once per request (React `cache`), shared by the layout's header and the page. The active
 * tenant is the caller's first by name until a tenant switcher exists.
 */
export const loadShell = cache(async (): Promise<ShellState> => {
  // Read the request first: it marks the page dynamic even when the database turns out to be missing.
  const requestHeaders = await headers();
  let caller: Caller | null;
  try {
    caller = await resolveCaller(getDb(), requestHeaders, { auth: authFor });
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    console.error(JSON.stringify({ level: "error", msg: "page shell could not resolve the caller", error }));
    return { kind: "unavailable" };
  }
  if (!caller) return { kind: "signed-out" };
  const tenant = caller.memberships[0];
  return tenant ? { kind: "ready", caller, tenant } : { kind: "no-tenant", caller };
});
