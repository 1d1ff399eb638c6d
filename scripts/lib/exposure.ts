import { isIP } from "node:net";
import { DEV_AUTH_SECRET, type Settings } from "@rhumbatron/core";

/**
 * Closed by default (docs/production.md, Exposing it). Whoever knows the auth secret can forge a
 * session cookie,
 * and the development secret is public (it is in this repository). So `npm start` refuses, before it
 * starts anything, to run outside dev with that secret (or none), and to listen on an address other
 * machines can reach while that secret is in use.
 */

/** True for addresses only this machine can reach: localhost, 127.0.0.0/8, ::1 (and its IPv4-mapped form). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) !== 6) return false;
  // The URL parser writes an IPv6 address in its one short form: ::1, or ::ffff:7f00:1 for ::ffff:127.0.0.1.
  const short = new URL(`http://[${h}]`).hostname.slice(1, -1);
  return short === "::1" || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(short);
}

/** Why these settings must not run (one line saying what to set), or null when they may. */
export function exposureRefusal(
  s: Pick<Settings, "RHUMBATRON_ENV" | "RHUMBATRON_AUTH_SECRET" | "HOST">,
): string | null {
  // Unset means the development secret (authSecret in packages/core/src/settings.ts).
  const devSecret = (s.RHUMBATRON_AUTH_SECRET ?? DEV_AUTH_SECRET) === DEV_AUTH_SECRET;
  if (s.RHUMBATRON_ENV !== "dev" && devSecret) {
    return (
      `RHUMBATRON_ENV=${s.RHUMBATRON_ENV} needs a secret of its own in RHUMBATRON_AUTH_SECRET ` +
      "(the development secret is public, so anyone could forge a session); set one with `openssl rand -base64 32`"
    );
  }
  if (!isLoopbackHost(s.HOST) && devSecret) {
    return (
      `HOST=${s.HOST} lets other machines reach Rhumbatron, but sessions are signed with the public development secret; ` +
      "set RHUMBATRON_AUTH_SECRET (`openssl rand -base64 32`) and RHUMBATRON_PUBLIC_URL, or unset HOST to listen on 127.0.0.1 only"
    );
  }
  return null;
}
