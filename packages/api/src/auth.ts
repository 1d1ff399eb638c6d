import { randomUUID } from "node:crypto";
import { authSecret, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, publicUrl, type Settings } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { AttemptLog, clientAddress, SIGN_IN_LIMITS, waitFor } from "./sign-in-limit.ts";

/** Where better-auth's endpoints live (the web app mounts them at `app/api/auth/[...all]/route.ts`). */
export const AUTH_BASE_PATH = "/api/auth";

/** IDs in the project's style (`ses_<uuid>`), so a row says what it is. */
const ID_PREFIX: Record<string, string> = { user: "usr", session: "ses", account: "acc", verification: "ver" };

/**
 * better-auth, configured for Rhumbatron: email + password only, sign-up closed (users are created by
 * an administrator or the seed, README: Sign-in and API tokens), sessions in Postgres through the
 * Prisma client. Its user model is our `users` table (the Prisma model's fields already carry
 * better-auth's names; @map gives the snake_case columns); its verification values live in
 * `auth_verifications`, so they are never mistaken for a Candidate's verification.
 */
export function createAuth(db: Db, settings: Settings, options: { now?: () => number } = {}) {
  const baseURL = publicUrl(settings);
  const signIn = signInLimiter(options.now ?? Date.now);
  return betterAuth({
    appName: "Rhumbatron",
    baseURL,
    basePath: AUTH_BASE_PATH,
    secret: authSecret(settings),
    // Without a configured address, people reach a local install as localhost or 127.0.0.1.
    trustedOrigins: settings.RHUMBATRON_PUBLIC_URL ? [] : [`http://127.0.0.1:${settings.PORT}`],
    database: prismaAdapter(db, { provider: "postgresql" }),
    user: { modelName: "user" },
    session: { modelName: "session" },
    account: { modelName: "account" },
    verification: { modelName: "authVerification" },
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      // Applies where someone chooses a password (change-password); sign-in checks only the maximum.
      minPasswordLength: MIN_PASSWORD_LENGTH,
      maxPasswordLength: MAX_PASSWORD_LENGTH,
    },
    advanced: {
      database: { generateId: ({ model }) => `${ID_PREFIX[model] ?? model}_${randomUUID()}` },
      // better-auth skips its origin (CSRF) check when NODE_ENV=test; tests must see production's behaviour.
      disableOriginCheck: false,
    },
    telemetry: { enabled: false },
    hooks: { before: signIn.before, after: signIn.after },
  });
}

const SIGN_IN_PATH = "/sign-in/email";

/**
 * better-auth hooks that limit sign-in attempts per account and per client address
 * (packages/api/src/sign-in-limit.ts): past either limit the answer is 429 with when to try again.
 */
function signInLimiter(now: () => number) {
  const accounts = new AttemptLog(SIGN_IN_LIMITS.account);
  const addresses = new AttemptLog(SIGN_IN_LIMITS.address);
  // Each attempt in flight, by its request (its body for a server-side call): what to take back if it succeeds.
  const inFlight = new WeakMap<object, { account: string; address: string | null; at: number }>();
  const keyOf = (ctx: { body?: unknown; request?: Request }): object | undefined =>
    ctx.request ?? (typeof ctx.body === "object" && ctx.body !== null ? ctx.body : undefined);
  const attemptOf = (ctx: { body?: unknown; headers?: Headers; request?: Request }) => {
    const email = (ctx.body as { email?: unknown } | undefined)?.email;
    return {
      account: typeof email === "string" ? email.trim().toLowerCase() : "",
      address: clientAddress(ctx.request?.headers ?? ctx.headers),
    };
  };
  const before = createAuthMiddleware(async (ctx) => {
    if (ctx.path !== SIGN_IN_PATH) return;
    const { account, address } = attemptOf(ctx);
    const at = now();
    const byAccount = accounts.blockedUntil(account, at);
    const byAddress = address === null ? null : addresses.blockedUntil(address, at);
    const until = Math.max(byAccount ?? 0, byAddress ?? 0);
    if (until > 0) {
      const who = byAccount !== null && until === byAccount ? "for this account" : "from this address";
      throw new APIError(
        "TOO_MANY_REQUESTS",
        {
          code: "TOO_MANY_SIGN_IN_ATTEMPTS",
          message: `Too many failed sign-in attempts ${who}. Try again in ${waitFor(until, at)}.`,
        },
        { "Retry-After": String(Math.max(1, Math.ceil((until - at) / 1000))) },
      );
    }
    accounts.record(account, at);
    if (address !== null) addresses.record(address, at);
    const key = keyOf(ctx);
    if (key) inFlight.set(key, { account, address, at });
  });
  const after = createAuthMiddleware(async (ctx) => {
    if (ctx.path !== SIGN_IN_PATH) return;
    const key = keyOf(ctx);
    const attempt = key && inFlight.get(key);
    const returned = ctx.context.returned;
    const failed = returned instanceof Error || (returned instanceof Response && !returned.ok);
    if (!attempt || failed) return;
    accounts.clear(attempt.account);
    if (attempt.address !== null) addresses.forget(attempt.address, attempt.at);
  });
  return { before, after };
}

export type Auth = ReturnType<typeof createAuth>;

/**
 * better-auth for each database client, one instance per client (the server has one; each test file
 * has its own), configured from `settings`, which is read on the first use (not when this is called).
 */
export function authPerDb(settings: () => Settings): (db: Db) => Auth {
  const instances = new WeakMap<Db, Auth>();
  return (db) => {
    let auth = instances.get(db);
    if (!auth) {
      auth = createAuth(db, settings());
      instances.set(db, auth);
    }
    return auth;
  };
}
