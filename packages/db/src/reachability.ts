import { isIP } from "node:net";

/**
 * Whether an error means the database cannot be used at all, and why, in words: what the API
 * answers with (packages/api/src/database-errors.ts), the health endpoint says
 * (apps/web/src/server/health.ts) and the worker logs once per outage (apps/worker/src/outage.ts).
 * Read from the error's fields (Prisma's code, the pg driver adapter's kind, Postgres's SQLSTATE,
 * pg's socket errors), or pg's own message where no code comes with it; Prisma's multi-line
 * messages never reach a person.
 */

/** Why the server cannot be used, in words; `answered`: it answered, but refuses this connection. */
export interface Unreachable {
  reason: string;
  answered: boolean;
}

const down = (reason: string): Unreachable => ({ reason, answered: false });
const refuses = (reason: string): Unreachable => ({ reason, answered: true });

/**
 * The socket errors of a server that is down, unknown or cut off, as a bare pg client raises them
 * (Prisma's adapter converts them to kinds). Read only for an error known to come from a database
 * connection: a blob store or a webhook fails with the same codes.
 */
const SOCKET: Record<string, Unreachable> = {
  ECONNREFUSED: down("connection refused"),
  ENOTFOUND: down("host not found"),
  EAI_AGAIN: down("host not found"),
  ETIMEDOUT: down("timed out"),
  EHOSTUNREACH: down("host unreachable"),
  ENETUNREACH: down("network unreachable"),
  ECONNRESET: down("connection lost"),
  EPIPE: down("connection lost"),
};

/** Prisma's codes: cannot reach, timed out, closed the connection, no free connection, too many connections. */
const PRISMA: Record<string, Unreachable> = {
  P1001: down("connection refused"),
  P1002: down("timed out"),
  P1008: down("timed out"),
  P1017: down("connection lost"),
  P2024: down("timed out waiting for a free connection"),
  P2037: refuses("too many connections"),
};

/** SQLSTATE: connection exceptions (08…), a login refused, too many connections, a server going away. */
function fromSqlState(code: string): Unreachable | null {
  if (code.startsWith("08")) return down("connection lost");
  if (code === "57P01" || code === "57P02") return down("the server shut down");
  if (code === "57P03") return down("the server is starting up or shutting down");
  if (code === "53300") return refuses("too many connections");
  if (code === "28P01") return refuses("the password was refused");
  if (code === "28000") return refuses("access denied");
  if (code === "3D000") return refuses("the database does not exist");
  return null;
}

/** The pg driver adapter's kinds (Prisma's `meta.driverAdapterError.cause`, or a DriverAdapterError's cause). */
function fromKind(c: Record<string, unknown>): Unreachable | null {
  switch (c.kind) {
    // ECONNREFUSED names the address it tried, ENOTFOUND the name it could not resolve.
    case "DatabaseNotReachable":
      return down(typeof c.host === "string" && isIP(c.host) === 0 ? "host not found" : "connection refused");
    case "ConnectionClosed":
      return down("connection lost");
    case "SocketTimeout":
      return down("timed out");
    case "TlsConnectionError":
      return down("the TLS connection failed");
    case "TooManyConnections":
      return refuses("too many connections");
    case "AuthenticationFailed":
      return refuses("the password was refused");
    case "DatabaseAccessDenied":
      return refuses("access denied");
    case "DatabaseDoesNotExist":
      return refuses("the database does not exist");
    default: {
      const code = c.originalCode ?? c.code;
      return typeof code === "string" ? fromSqlState(code) : null;
    }
  }
}

/** What pg and Prisma say when no code comes with it (pg's pool errors pass the adapter unconverted). */
const MESSAGES: [RegExp, Unreachable][] = [
  [/Can't reach database server/i, down("connection refused")],
  [/Connection terminated due to connection timeout|timeout exceeded when trying to connect/i, down("timed out")],
  [
    /Connection terminated|Client has encountered a connection error|Server has closed the connection/i,
    down("connection lost"),
  ],
  [
    /the database system is (starting up|shutting down|in recovery mode)/i,
    down("the server is starting up or shutting down"),
  ],
];

type Fields = {
  code?: unknown;
  errorCode?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: unknown;
};

/**
 * Why the database cannot be used at all ("connection refused", "timed out", "the server shut
 * down", "the password was refused"…), or null when the error is of another kind (a failed query,
 * a constraint, a bug). Looks through causes and an AggregateError's errors (Node's connect to a
 * name with several addresses). `fromConnection`: the error came from a pg connection of our own,
 * so a bare socket error (ECONNREFUSED…) is the database's.
 */
export function unreachable(err: unknown, options: { fromConnection?: boolean } = {}, depth = 0): Unreachable | null {
  if (typeof err !== "object" || err === null || depth > 5) return null;
  const e = err as Fields & Record<string, unknown>;
  const adapter = (e.meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError?.cause;
  const found =
    (adapter && typeof adapter === "object" ? fromKind(adapter as Record<string, unknown>) : null) ??
    (typeof e.kind === "string" ? fromKind(e) : null) ??
    codeOf(e, options.fromConnection ?? false) ??
    MESSAGES.find(([re]) => typeof e.message === "string" && re.test(e.message))?.[1] ??
    null;
  if (found) return found;
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const reason = unreachable(inner, options, depth + 1);
    if (reason) return reason;
  }
  return null;
}

function codeOf(e: Fields, socket: boolean): Unreachable | null {
  const code = typeof e.code === "string" ? e.code : typeof e.errorCode === "string" ? e.errorCode : null;
  if (!code) return null;
  return (socket ? SOCKET[code] : undefined) ?? PRISMA[code] ?? fromSqlState(code);
}

/**
 * One line for an error that is not about reaching the server: the server's own message when the
 * driver passed one on (Prisma's adapter keeps it), else the last line of the message; credentials
 * in a URL are blanked.
 */
export function databaseErrorText(err: unknown): string {
  const meta = (err as Fields | null)?.meta as { driverAdapterError?: { cause?: Record<string, unknown> } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const fromServer = cause?.originalMessage ?? cause?.message;
  const text = typeof fromServer === "string" ? fromServer : err instanceof Error ? err.message : String(err);
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return (lines.at(-1) ?? "unknown error").trim().replace(/(\w+:\/\/)[^@\s/]*@/g, "$1");
}

/** `host:port` of a Postgres URL: what a message names, never the user or the password. */
export function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return "the configured address";
  }
}
