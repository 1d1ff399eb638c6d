import { randomUUID } from "node:crypto";
import {
  appOrigins,
  authSecret,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  publicUrl,
  type Settings,
} from "@rhumbatron/core";
import {
  type AttemptKey,
  beginSignInAttempt,
  clearSignInAttempts,
  type Db,
  forgetSignInAttempts,
} from "@rhumbatron/db";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { clientAddress, SIGN_IN_LIMITS, waitFor } from "./sign-in-limit.ts";

/** Where better-auth's endpoints live (the web app mounts them at `app/api/auth/[...all]/route.ts`). */
export const AUTH_BASE_PATH = "/api/auth";

/** IDs in the project's style (`ses_<uuid>`), so a row says what it is. */
const ID_PREFIX: Record<string, string> = { user: "usr", session: "ses", account: "acc", verification: "ver" };

/**
 * better-auth, configured for Rhumbatron: email + password only, sign-up closed (users are created by
 * an administrator or the seed, docs/sign-in.md), sessions in Postgres through the
 * Prisma client. Its user model is our `users` table (the Prisma model's fields already carry
 * better-auth's names; @map gives the snake_case columns); its verification values live in
 * `auth_verifications`, so they are never mistaken for a Candidate's verification.
 */
export function createAuth(db: Db, settings: Settings, options: { now?: () => number } = {}) {
  const baseURL = publicUrl(settings);
  const signIn = signInLimiter(db, options.now ?? Date.now);
  return betterAuth({
    appName: "Rhumbatron",
    baseURL,
    basePath: AUTH_BASE_PATH,
    secret: authSecret(settings),
    // Without a configured address, people reach a local install as localhost or 127.0.0.1.
    trustedOrigins: appOrigins(settings).filter((o) => o !== new URL(baseURL).origin),
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
 * (packages/api/src/sign-in-limit.ts), counted in Postgres (sign_in_attempts) so every web process
 * shares the count: past either limit the answer is 429 with when to try again.
 */
function signInLimiter(db: Db, now: () => number) {
  // Each attempt in flight, by its request (its body for a server-side call): what to take back if it succeeds.
  const inFlight = new WeakMap<object, { account: string; addressIds: bigint[] }>();
  const keyOf = (ctx: { body?: unknown; request?: Request }): object | undefined =>
    ctx.request ?? (typeof ctx.body === "object" && ctx.body !== null ? ctx.body : undefined);
  const attemptOf = (ctx: { body?: unknown; headers?: Headers; request?: Request }): AttemptKey[] => {
    const email = (ctx.body as { email?: unknown } | undefined)?.email;
    const address = clientAddress(ctx.request?.headers ?? ctx.headers);
    return [
      {
        scope: "account",
        key: typeof email === "string" ? email.trim().toLowerCase() : "",
        limit: SIGN_IN_LIMITS.account,
      },
      ...(address === null ? [] : [{ scope: "address", key: address, limit: SIGN_IN_LIMITS.address }]),
    ];
  };
  const before = createAuthMiddleware(async (ctx) => {
    if (ctx.path !== SIGN_IN_PATH) return;
    const keys = attemptOf(ctx);
    const at = now();
    const r = await beginSignInAttempt(db, keys, new Date(at));
    if (!r.ok) {
      const until = Math.max(...r.blocked.map((b) => b.until.getTime()));
      const account = r.blocked.find((b) => b.scope === "account");
      const who = account && account.until.getTime() === until ? "for this account" : "from this address";
      throw new APIError(
        "TOO_MANY_REQUESTS",
        {
          code: "TOO_MANY_SIGN_IN_ATTEMPTS",
          message: `Too many failed sign-in attempts ${who}. Try again in ${waitFor(until, at)}.`,
        },
        { "Retry-After": String(Math.max(1, Math.ceil((until - at) / 1000))) },
      );
    }
    const key = keyOf(ctx);
    if (key) {
      const addressIds = r.ids.filter((x) => x.scope === "address").map((x) => x.id);
      inFlight.set(key, { account: keys[0]?.key ?? "", addressIds });
    }
  });
  const after = createAuthMiddleware(async (ctx) => {
    if (ctx.path !== SIGN_IN_PATH) return;
    const key = keyOf(ctx);
    const attempt = key && inFlight.get(key);
    const returned = ctx.context.returned;
    const failed = returned instanceof Error || (returned instanceof Response && !returned.ok);
    if (!attempt || failed) return;
    // A success clears its account's count and takes back its own attempt from the address's.
    await clearSignInAttempts(db, "account", attempt.account);
    await forgetSignInAttempts(db, attempt.addressIds);
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
