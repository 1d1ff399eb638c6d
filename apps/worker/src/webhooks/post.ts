import { type LookupAddress, lookup } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { addressKind, isLoopbackName, webhookAddressProblem } from "@rhumbatron/core";

/**
 * One HTTP POST of a webhook delivery, outside any transaction. It connects only where the address
 * rule lets it (core's webhookAddressProblem; docs/notifications.md): a literal address
 * is checked before connecting, a name on every address it resolves to, inside the connection's own
 * lookup, so the address checked is the address connected to (a name that resolves elsewhere the
 * second time gains nothing). Redirects are not followed: a 3xx is a failed attempt like any other
 * answer but a 2xx. The whole exchange up to the status line has one deadline.
 */
export interface PostResult {
  ok: boolean;
  /** The receiver's status, when it answered. */
  httpStatus: number | null;
  /** Why the attempt failed, in words for the delivery log; null when it succeeded. */
  error: string | null;
  durationMs: number;
}

/** How much of a failed answer's body the log keeps. */
const ERROR_BODY_CHARS = 300;

/** How a name is resolved to every one of its addresses (node's dns.lookup with `all`). */
export type ResolveAll = (hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

const resolveAll: ResolveAll = (hostname, callback) => lookup(hostname, { all: true }, callback);

/**
 * A resolver for the connection that refuses a name when any of its addresses is one the rule does
 * not allow (a name that points both outside and inward is refused, not raced).
 */
export function guardedLookup(allowPrivate: boolean, resolve: ResolveAll = resolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, all) => {
      if (err) return callback(err, "", 0);
      const refused = all.map((a) => webhookAddressProblem(hostname, a.address, allowPrivate)).find(Boolean);
      if (refused) return callback(Object.assign(new Error(refused), { code: "EREFUSED_TARGET" }), "", 0);
      const addresses = all.filter((a) => !options.family || a.family === options.family);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      return callback(null, first.address, first.family);
    });
  };
}

/** Why the URL's host may not be connected to before any lookup: a literal address or localhost. */
function literalProblem(u: URL, allowPrivate: boolean): string | null {
  const host = u.hostname;
  if (addressKind(host) !== null) return webhookAddressProblem(host, host.replace(/^\[|\]$/g, ""), allowPrivate);
  if (!allowPrivate && isLoopbackName(host)) return webhookAddressProblem(host, "127.0.0.1", false);
  return null;
}

function readSome(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      text += chunk;
      if (text.length >= ERROR_BODY_CHARS) res.destroy();
    });
    res.on("close", () => resolve(text.slice(0, ERROR_BODY_CHARS).trim()));
    res.on("error", () => resolve(text.slice(0, ERROR_BODY_CHARS).trim()));
  });
}

export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  o: { timeoutMs: number; allowPrivate: boolean },
): Promise<PostResult> {
  const started = performance.now();
  const took = () => Math.max(0, Math.round(performance.now() - started));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, httpStatus: null, error: `not a URL: ${url}`, durationMs: 0 };
  }
  const refused = literalProblem(u, o.allowPrivate);
  if (refused) return { ok: false, httpStatus: null, error: refused, durationMs: took() };
  const send = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let status: number | null = null;
    const finish = (r: Omit<PostResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      resolve({ ...r, durationMs: took() });
    };
    const req = send(
      u,
      {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        lookup: guardedLookup(o.allowPrivate),
        // A connection of its own per attempt: nothing pooled outlives the delivery.
        agent: false,
      },
      (res) => {
        const answered = res.statusCode ?? 0;
        status = answered;
        if (answered >= 200 && answered < 300) {
          res.resume();
          finish({ ok: true, httpStatus: answered, error: null });
          return;
        }
        void readSome(res).then((text) =>
          finish({ ok: false, httpStatus: answered, error: `answered ${answered}${text ? `: ${text}` : ""}` }),
        );
      },
    );
    // The deadline also ends a connection the receiver keeps open after its status line (a body that
    // never ends): nothing of an attempt outlives it.
    const timer = setTimeout(() => {
      const late = status === null ? `did not answer within ${o.timeoutMs / 1000} s` : `answered ${status}`;
      finish({ ok: false, httpStatus: status, error: late });
      req.destroy();
    }, o.timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("error", (err: NodeJS.ErrnoException) => {
      const refusedTarget = err.code === "EREFUSED_TARGET";
      finish({ ok: false, httpStatus: null, error: refusedTarget ? err.message : `unreachable: ${err.message}` });
    });
    req.end(body);
  });
}
