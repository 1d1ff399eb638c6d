import { isIP } from "node:net";

import type { AttemptLimit } from "@rhumbatron/db";

/**
 * Sign-in attempts per account and per client address (docs/sign-in.md). better-auth's
 * own `rateLimit` keys only by address and path and counts every request, so it cannot hold an account
 * whose password is being guessed from many addresses; this counts attempts that did not succeed, by
 * email and by address, in Postgres (packages/db/src/auth/sign-in-attempts.ts), shared by every web
 * process and kept across restarts.
 *
 * An attempt counts from the moment it starts, so parallel guesses cannot all slip in before the first
 * one fails; a successful sign-in takes its attempt back and clears the account's count. A refused
 * (429) attempt does not count, so the lock ends when it says it does.
 */
export const SIGN_IN_LIMITS = {
  /** Failed attempts at one account (by email), from anywhere. */
  account: { max: 10, windowMs: 15 * 60_000 },
  /** Failed attempts from one address (an IPv6 /64), at any accounts: more, as offices share one. */
  address: { max: 50, windowMs: 15 * 60_000 },
} as const satisfies Record<string, AttemptLimit>;

/**
 * The client's address: the last X-Forwarded-For entry, which is what the nearest proxy saw (the web
 * app listens on 127.0.0.1, so only a local proxy reaches it; Next.js itself fills the header with
 * the connection's address when a request has none). IPv6 addresses count per /64, the block one
 * host usually has. Null when there is none (a server-side call).
 */
export function clientAddress(headers: Headers | undefined): string | null {
  const forwarded = headers
    ?.get("x-forwarded-for")
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const raw = (forwarded?.at(-1) ?? headers?.get("x-real-ip")?.trim() ?? "").replace(/^\[(.*)\]$/, "$1");
  const mapped = raw.toLowerCase().startsWith("::ffff:") ? raw.slice("::ffff:".length) : raw;
  if (isIP(mapped) === 4) return mapped;
  if (isIP(raw) !== 6) return null;
  const groups = new URL(`http://[${raw}]`).hostname.slice(1, -1);
  const [head = "", tail = ""] = groups.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const full = groups.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  return `${full.slice(0, 4).join(":")}::/64`;
}

/** "14 minutes", "1 minute", "30 seconds": how long until `until`. */
export function waitFor(until: number, now: number): string {
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}
