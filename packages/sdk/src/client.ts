import { createTRPCClient, httpBatchLink, type TRPCClient } from "@trpc/client";
import superjson from "superjson";
import type { ClientBase } from "./client/base.ts";
import { candidateMethods } from "./client/candidates.ts";
import { changeMethods } from "./client/changes.ts";
import { importMethods } from "./client/imports.ts";
import { inboxMethods } from "./client/inbox.ts";
import { landingMethods } from "./client/landing.ts";
import { projectMethods } from "./client/projects.ts";
import { runMethods } from "./client/runs.ts";
import { secretMethods } from "./client/secrets.ts";
import { tenantMethods } from "./client/tenant.ts";
import { testMethods } from "./client/tests.ts";
import type { ChangeDetail, Membership } from "./client/types.ts";
import { RhumbatronError, toRhumbatronError } from "./errors.ts";
import type { AppRouter } from "./router.ts";
import { tenantLink } from "./tenant-link.ts";

export type * from "./client/types.ts";

/** The tRPC endpoint under the web app's address (apps/web/src/app/api/trpc). */
export const TRPC_PATH = "/api/trpc";

export interface RhumbatronClientOptions {
  /** The web app's address, e.g. http://localhost:3000. */
  url: string;
  /** An API token (`rbt_…`, created at /settings/tokens); sent as `Authorization: Bearer`. */
  token?: string;
  /** The tenant to act in, by ID or slug. Default: the token's tenant (a token has exactly one). */
  tenant?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

export interface Whoami {
  /** The membership this client acts in. */
  tenant: Membership;
  /** Every membership the credentials carry (one for a token). */
  memberships: Membership[];
}

export type RhumbatronClient = ReturnType<typeof createRhumbatronClient>;

/**
 * A typed client for the Rhumbatron API. `trpc` is the raw tRPC client (every procedure of
 * AppRouter; a call that names no tenant acts in the token's); the helpers act in the token's
 * tenant and throw only RhumbatronError.
 */
export function createRhumbatronClient(opts: RhumbatronClientOptions) {
  const url = opts.url.replace(/\/+$/, "");
  const trpc: TRPCClient<AppRouter> = createTRPCClient<AppRouter>({
    links: [
      // A tenant's procedure called without a tenant acts in the credentials' tenant (tenant-link.ts).
      tenantLink(() => tenantId()),
      httpBatchLink({
        url: `${url}${TRPC_PATH}`,
        transformer: superjson,
        maxURLLength: 8000,
        headers: () => (opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      }),
    ],
  });

  /** Runs one call and turns whatever it throws into a RhumbatronError. */
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toRhumbatronError(err, url);
    }
  };

  let who: Promise<Whoami> | undefined;
  const whoami = (): Promise<Whoami> => {
    who ??= call(() => trpc.tenants.mine.query()).then((memberships) => ({
      tenant: pickTenant(memberships, opts.tenant, url),
      memberships,
    }));
    // A failure is not remembered: the next call asks again.
    who.catch(() => {
      who = undefined;
    });
    return who;
  };
  const tenantId = async () => (await whoami()).tenant.tenantId;

  const getChange = async (changeId: string): Promise<ChangeDetail> => {
    const t = await tenantId();
    return call(() => trpc.change.get.query({ tenantId: t, changeId }));
  };

  const base: ClientBase = { url, trpc, call, tenantId, getChange };
  return {
    url,
    trpc,
    whoami,
    tenantId,
    ...projectMethods(base),
    ...importMethods(base),
    ...changeMethods(base),
    ...runMethods(base),
    ...candidateMethods(base),
    ...landingMethods(base),
    ...testMethods(base),
    ...tenantMethods(base),
    ...secretMethods(base),
    ...inboxMethods(base),
  };
}

function pickTenant(memberships: Membership[], wanted: string | undefined, url: string): Membership {
  if (wanted) {
    const m = memberships.find((x) => x.tenantId === wanted || x.slug === wanted);
    if (m) return m;
    const have = memberships.map((x) => x.slug).join(", ") || "none";
    throw new RhumbatronError(
      "FORBIDDEN",
      `these credentials cannot act in tenant ${wanted} (they act in: ${have}); create a token for it at ${url}/settings/tokens`,
    );
  }
  const [only, ...rest] = memberships;
  if (!only) {
    throw new RhumbatronError(
      "FORBIDDEN",
      `these credentials belong to no tenant; ask a tenant admin to add you, then create a token at ${url}/settings/tokens`,
    );
  }
  if (rest.length > 0) {
    const slugs = memberships.map((x) => x.slug).join(", ");
    throw new RhumbatronError(
      "BAD_REQUEST",
      `these credentials act in several tenants (${slugs}); choose one with the tenant option (--tenant)`,
    );
  }
  return only;
}
