import { randomUUID } from "node:crypto";
import { authSecret, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, publicUrl, type Settings } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";

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
export function createAuth(db: Db, settings: Settings) {
  const baseURL = publicUrl(settings);
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
  });
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
