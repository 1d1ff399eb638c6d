import { publicUrl } from "@rhumbatron/core";
import { createDb, type Db, setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { type Auth, createAuth } from "./auth.ts";
import { SIGN_IN_LIMITS } from "./sign-in-limit.ts";
import { authUrl, emailFor, seedTenants } from "./testing/fixtures.ts";
import { testSettings } from "./testing/services.ts";

// Sign-in attempts go through better-auth's real HTTP handler on a real database, as the browser's
// do; only the limiter's clock is the test's, so "15 minutes later" needs no waiting.
const t = useTestDatabase();
const ADMIN = emailFor("admin");
const MEMBER = emailFor("member");
const PASSWORD = "the-right-password";
let clock = 0;
let auth: Auth;

beforeAll(async () => {
  await seedTenants(t.db);
  await setUserPassword(t.db, "usr_acme_admin", PASSWORD);
  await setUserPassword(t.db, "usr_acme_member", PASSWORD);
});

beforeEach(async () => {
  // A fresh count of attempts: they are kept in Postgres, not in the auth instance.
  await t.db.signInAttempt.deleteMany({});
  clock = Date.parse("2026-12-01T09:00:00Z");
  auth = createAuth(t.db, testSettings(), { now: () => clock });
});

function signIn(email: string, password: string, from = "203.0.113.7"): Promise<Response> {
  return auth.handler(
    new Request(authUrl("/sign-in/email"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: publicUrl(testSettings()),
        "x-forwarded-for": from,
      },
      body: JSON.stringify({ email, password }),
    }),
  );
}

async function statuses(n: number, attempt: (i: number) => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await attempt(i)).status);
  return out;
}

const WRONG = "not-the-password";
const MINUTES_15 = 15 * 60_000;

// Every attempt hashes a password (scrypt), so each costs a noticeable moment on a busy machine.
describe("sign-in attempts are limited per account and per address", { timeout: 120_000 }, () => {
  it("answers the 11th wrong password for an account with 429 and when to try again; other accounts sign in", async () => {
    expect(await statuses(10, () => signIn(ADMIN, WRONG))).toEqual(Array(10).fill(401));
    const refused = await signIn(ADMIN, WRONG);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("900");
    expect(await refused.json()).toMatchObject({
      code: "TOO_MANY_SIGN_IN_ATTEMPTS",
      message: "Too many failed sign-in attempts for this account. Try again in 15 minutes.",
    });
    // Locked means locked: the right password is refused too, and no session cookie is set.
    const right = await signIn(ADMIN, PASSWORD);
    expect(right.status).toBe(429);
    expect(right.headers.getSetCookie()).toEqual([]);
    // Another account, from the same address, is not held by this account's limit.
    expect((await signIn(MEMBER, WRONG)).status).toBe(401);
    expect((await signIn(MEMBER, PASSWORD)).status).toBe(200);
    // The lock ends when it said it would, and the count starts again.
    clock += MINUTES_15 - 60_000;
    expect((await signIn(ADMIN, PASSWORD)).status).toBe(429);
    expect(await (await signIn(ADMIN, PASSWORD)).json()).toMatchObject({ message: /Try again in 1 minute\.$/ });
    clock += 60_000;
    expect((await signIn(ADMIN, PASSWORD)).status).toBe(200);
  });

  it("holds the account whichever addresses the guesses come from, whatever case the email is in", async () => {
    const from = (i: number) => `198.51.100.${i + 1}`;
    expect(await statuses(10, (i) => signIn(i % 2 ? ADMIN.toUpperCase() : ADMIN, WRONG, from(i)))).toEqual(
      Array(10).fill(401),
    );
    expect((await signIn(ADMIN, PASSWORD, "192.0.2.99")).status).toBe(429);
  });

  it("counts every attempt from its start: of 20 parallel guesses at most 10 are checked", async () => {
    const codes = (await Promise.all(Array.from({ length: 20 }, () => signIn(ADMIN, WRONG)))).map((r) => r.status);
    expect(codes.filter((c) => c === 401)).toHaveLength(10);
    expect(codes.filter((c) => c === 429)).toHaveLength(10);
  });

  it("shares the count between web processes and keeps it across a restart", async () => {
    // Two auth instances on their own database clients are two web processes; a third, made after
    // the other two, is one that started later. All see the same attempts.
    const clients = [createDb(t.url, { maxConnections: 2 }), createDb(t.url, { maxConnections: 2 })];
    onTestFinished(() => Promise.all(clients.map((c) => c.$disconnect())).then(() => {}));
    const processes = [auth, createAuth(clients[0] as Db, testSettings(), { now: () => clock })];
    const via = (p: Auth, password: string) =>
      p.handler(
        new Request(authUrl("/sign-in/email"), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            origin: publicUrl(testSettings()),
            "x-forwarded-for": "203.0.113.7",
          },
          body: JSON.stringify({ email: ADMIN, password }),
        }),
      );
    expect(await statuses(10, (i) => via(processes[i % 2] as Auth, WRONG))).toEqual(Array(10).fill(401));
    expect((await via(processes[1] as Auth, PASSWORD)).status).toBe(429);
    const restarted = createAuth(clients[1] as Db, testSettings(), { now: () => clock });
    expect((await via(restarted, PASSWORD)).status).toBe(429);
  });

  it("clears an account's count when it signs in", async () => {
    expect(await statuses(9, () => signIn(ADMIN, WRONG))).toEqual(Array(9).fill(401));
    expect((await signIn(ADMIN, PASSWORD)).status).toBe(200);
    expect(await statuses(10, () => signIn(ADMIN, WRONG))).toEqual(Array(10).fill(401));
    expect((await signIn(ADMIN, WRONG)).status).toBe(429);
  });

  it(`refuses an address after ${SIGN_IN_LIMITS.address.max} failed attempts at any accounts, and only that address`, async () => {
    const max = SIGN_IN_LIMITS.address.max;
    // Different accounts each time (none reaches its own limit); the proxy's last X-Forwarded-For entry
    // is the address, so entries the client put before it change nothing.
    const guesses = Array.from({ length: max }, (_, i) =>
      signIn(`nobody-${i}@acme.test`, WRONG, `10.9.9.${i % 7}, 203.0.113.7`),
    );
    expect((await Promise.all(guesses)).map((r) => r.status)).toEqual(Array(max).fill(401));
    const refused = await signIn(MEMBER, PASSWORD, "203.0.113.7");
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      message: "Too many failed sign-in attempts from this address. Try again in 15 minutes.",
    });
    expect((await signIn(MEMBER, PASSWORD, "203.0.113.8")).status).toBe(200);
  });
});
