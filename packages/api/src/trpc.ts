import { type BlobStore, idSchema, type RhumbatronConfig } from "@rhumbatron/core";
import type { CanonicalReader, Db, Role, SourceProbe } from "@rhumbatron/db";
import type { Nudger } from "@rhumbatron/runtime";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { z } from "zod";
import type { Auth } from "./auth.ts";
import { type Caller, membershipIn, resolveCaller } from "./caller.ts";
import { toTRPCError } from "./errors.ts";
import { hasAtLeast } from "./roles.ts";

/**
 * What procedures need besides the database: the typed config, the nudger and the clock, and the
 * parts that depend on where the API runs. The host that mounts the router builds them from its
 * settings (apps/web: server/services.ts; tests: `testServices` in ./testing).
 */
export interface Services {
  config: RhumbatronConfig;
  nudger: Nudger;
  now: () => Date;
  /** Reads the source store for promotion's P6 (docs/protocol.md, Promotion: the composed commit in the Candidate fork). */
  sourceProbe: (db: Db) => SourceProbe;
  /** Reads the project's canonical repository at a commit (projects.checks). */
  canonicalReader: (db: Db) => CanonicalReader;
  /** The blob store the worker writes patches, check output and screenshots to (read-only here). */
  blobs: BlobStore;
  /** better-auth for a database client: reads the session cookie of a request (resolveCaller). */
  auth: (db: Db) => Auth;
  /** The worker's read-only git endpoint, where `git clone` reaches a project (projects.cloneAccess). */
  gitPublicUrl: string;
  /** Where the app's own pages are served from (core's appOrigins): the only origins a signed-in browser's mutation may come from. */
  appOrigins: string[];
  /** Seals an import's credentials and the tenant's secrets for the worker (RHUMBATRON_AUTH_SECRET; docs/repositories.md; docs/agents.md, Secrets). */
  credentialSecret: string;
}

export interface Context {
  db: Db;
  services: Services;
  /**
   * The caller, resolved on first use and then remembered for the request. Lazy on purpose: input is
   * validated before anything asks, so a request with bad input never reads the database.
   */
  getCaller(): Promise<Caller | null>;
}

export function createContext(opts: {
  db: Db;
  headers: Headers;
  services: Services;
  localUserEmail?: string;
}): Context {
  let caller: Promise<Caller | null> | undefined;
  const options = opts.localUserEmail === undefined ? {} : { localUserEmail: opts.localUserEmail };
  return {
    db: opts.db,
    services: opts.services,
    getCaller: () => {
      caller ??= resolveCaller(opts.db, opts.headers, { auth: opts.services.auth, ...options });
      return caller;
    },
  };
}

const isProduction = process.env.NODE_ENV === "production";

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  // Subscriptions run over server-sent events; a ping keeps a quiet feed open through proxies, and
  // a client that hears nothing (not even a ping) for twice that long reconnects with its last event ID.
  sse: { ping: { enabled: true, intervalMs: 10_000 }, client: { reconnectAfterInactivityMs: 20_000 } },
  errorFormatter({ shape, error }) {
    // Clients show field-level messages from the zod issues of a rejected input.
    const zodError = error.code === "BAD_REQUEST" && error.cause instanceof z.ZodError ? error.cause : null;
    let message = zodError ? z.prettifyError(zodError) : shape.message;
    // An unexpected failure's message can name hosts or SQL; in production the server log keeps it.
    if (isProduction && error.code === "INTERNAL_SERVER_ERROR") message = "Internal server error";
    return { ...shape, message, data: { ...shape.data, zodError: zodError?.issues ?? null } };
  },
});

/** DomainErrors thrown by core or db leave every procedure as the tRPC code the table in errors.ts names. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const mapped = toTRPCError(result.error);
    if (mapped !== result.error) throw mapped;
  }
  return result;
});

const authenticated = t.middleware(async ({ ctx, next }) => {
  const caller = await ctx.getCaller();
  if (!caller) throw new TRPCError({ code: "UNAUTHORIZED", message: "No signed-in user" });
  return next({ ctx: { caller } });
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const mergeRouters = t.mergeRouters;
export const publicProcedure = t.procedure.use(domainErrors);
export const authedProcedure = publicProcedure.use(authenticated);

/** Every tenant-scoped procedure's input starts with the tenant it acts in. */
export const tenantInput = z.object({ tenantId: idSchema });

/**
 * A procedure acting in one tenant, open to callers with at least `minimum` there (ROLE_ORDER in
 * roles.ts). Order matters: input is parsed first (bad input never reaches the database), then the
 * caller is resolved, then the role is checked before the procedure reads anything. A caller with no
 * membership gets the same FORBIDDEN as one with too low a role, so it learns nothing about the tenant.
 * Procedures add their own fields with a further `.input(z.object({ … }))`, which tRPC merges.
 */
export function tenantProcedure(minimum: Role) {
  return publicProcedure
    .input(tenantInput)
    .use(authenticated)
    .use(async ({ ctx, input, next }) => {
      const membership = membershipIn(ctx.caller, input.tenantId);
      if (!membership || !hasAtLeast(membership.role, minimum)) {
        throw new TRPCError({ code: "FORBIDDEN", message: `Requires the ${minimum} role or above in this tenant` });
      }
      return next({ ctx: { membership } });
    });
}
