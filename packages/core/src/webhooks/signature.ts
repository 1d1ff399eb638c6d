import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../events/hash.ts";

/**
 * The signature of a webhook delivery, as GitHub and Stripe sign theirs (docs/notifications.md,
 * "Verifying a delivery"):
 *
 *   X-Rhumbatron-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * The timestamp is signed with the body, so a receiver that refuses an old `t` cannot be replayed a
 * captured delivery later. Pure (noble's HMAC), so the worker signs and a receiver written against
 * @rhumbatron/core verifies with the same code.
 */
export const WEBHOOK_HEADERS = {
  signature: "X-Rhumbatron-Signature",
  event: "X-Rhumbatron-Event",
  delivery: "X-Rhumbatron-Delivery",
} as const;

/** How old a signature a receiver accepts by default (Stripe's tolerance). */
export const WEBHOOK_SIGNATURE_TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();

function mac(secret: string, t: number, body: string): string {
  return toHex(hmac(sha256, encoder.encode(secret), encoder.encode(`${t}.${body}`)));
}

/** The header value for `body` signed with `secret` at `t` (whole unix seconds). */
export function signWebhook(secret: string, t: number, body: string): string {
  return `t=${t},v1=${mac(secret, t, body)}`;
}

/** Equal strings, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

export type WebhookVerification = { ok: true; t: number } | { ok: false; reason: string };

/**
 * Checks a delivery: the header parses, `t` is within `toleranceSeconds` of `nowSeconds`, and one of
 * its v1 signatures is the HMAC of `<t>.<body>` with `secret`. `body` is the raw body as received
 * (parse the JSON only after this says ok).
 */
export function verifyWebhookSignature(o: {
  secret: string;
  header: string | null | undefined;
  body: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): WebhookVerification {
  if (!o.header) return { ok: false, reason: `no ${WEBHOOK_HEADERS.signature} header` };
  const parts = o.header.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  const signatures = parts.filter(([k, v]) => k === "v1" && v).map(([, v]) => v as string);
  if (!Number.isInteger(t) || signatures.length === 0)
    return { ok: false, reason: "the signature header is malformed" };
  const tolerance = o.toleranceSeconds ?? WEBHOOK_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(o.nowSeconds - t) > tolerance)
    return { ok: false, reason: `the timestamp ${t} is outside the tolerance` };
  const expected = mac(o.secret, t, o.body);
  return signatures.some((s) => sameText(s, expected))
    ? { ok: true, t }
    : { ok: false, reason: "no signature matches the body and the secret" };
}
