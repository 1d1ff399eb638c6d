import { DomainError } from "@rhumbatron/core";

/**
 * What a failure of the database client means for the caller, read from the error itself (Prisma's
 * code, the pg driver adapter's `kind`, Postgres' SQLSTATE, pg's own message): the database
 * cannot be reached (UNAVAILABLE, 503: try again later) or Postgres refused a value of the input
 * (INVALID_INPUT, 400: a second net behind the zod schemas). Anything else stays what it was, an
 * unexpected failure.
 */
export function fromDatabaseError(err: unknown): DomainError | null {
  for (const e of chain(err)) {
    if (isUnreachable(e)) {
      return new DomainError("UNAVAILABLE", "the database cannot be reached; try again in a moment", {
        cause: summary(e),
      });
    }
    const value = refusedValue(e);
    if (value) return new DomainError("INVALID_INPUT", `the database refused a value of the input: ${value}`);
  }
  return null;
}

/** Prisma's codes for a server it cannot reach, that timed out, closed the connection or has no free connection. */
const UNREACHABLE_PRISMA = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
/** The pg driver adapter's kinds for the same (DriverAdapterError.cause.kind). */
const UNREACHABLE_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TlsConnectionError",
  "DatabaseDoesNotExist",
  "DatabaseAccessDenied",
  "AuthenticationFailed",
]);
/** SQLSTATE: connection exceptions (08…), too many connections, a server shutting down or starting up. */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53300|57P0[1-3])$/;
/**
 * What pg and Prisma say when no code comes with it (pg's pool errors pass the adapter unconverted).
 * A bare socket errno (ECONNREFUSED…) is not enough: a blob store or a webhook fails with those too,
 * and the adapter already turns the database's own into DatabaseNotReachable (Prisma P1001).
 */
const UNREACHABLE_MESSAGE =
  /Can't reach database server|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|Server has closed the connection/i;

/**
 * SQLSTATEs caused by a value of the input: NUL or a byte sequence Postgres cannot store (22021,
 * 22P05), a value too long for its column (22001), text that is not a number or UUID (22P02), a
 * number out of range (22003).
 */
const INPUT_SQLSTATE = new Set(["22021", "22P05", "22001", "22P02", "22003"]);
/** Prisma's codes for the same: value too long, out of range, does not fit in 64 bits. */
const INPUT_PRISMA = new Set(["P2000", "P2020", "P2033"]);
const INPUT_KINDS = new Set(["LengthMismatch", "ValueOutOfRange", "InvalidInputValue"]);

type Fields = { code?: unknown; errorCode?: unknown; message?: unknown; meta?: unknown; kind?: unknown };

function isUnreachable(e: Fields): boolean {
  const code = str(e.code) ?? str(e.errorCode);
  if (code && (UNREACHABLE_PRISMA.has(code) || UNREACHABLE_SQLSTATE.test(code))) return true;
  const kind = str(e.kind);
  if (kind && UNREACHABLE_KINDS.has(kind)) return true;
  const adapter = adapterCause(e);
  if (adapter) {
    if (UNREACHABLE_KINDS.has(str(adapter.kind) ?? "")) return true;
    const sqlState = str(adapter.originalCode) ?? str(adapter.code);
    if (sqlState && UNREACHABLE_SQLSTATE.test(sqlState)) return true;
  }
  return UNREACHABLE_MESSAGE.test(str(e.message) ?? "");
}

/** The Postgres reason a value was refused, or null. */
function refusedValue(e: Fields): string | null {
  const code = str(e.code);
  const adapter = adapterCause(e);
  const sqlState =
    str(adapter?.originalCode) ?? str(adapter?.code) ?? (code && /^[0-9A-Z]{5}$/.test(code) ? code : null);
  const reason = str(adapter?.originalMessage) ?? str(adapter?.message);
  if (sqlState && INPUT_SQLSTATE.has(sqlState)) return reason ?? `SQLSTATE ${sqlState}`;
  if (adapter && INPUT_KINDS.has(str(adapter.kind) ?? "")) return reason ?? str(adapter.kind) ?? "invalid value";
  if (code && INPUT_PRISMA.has(code)) return lastLine(str(e.message)) ?? code;
  return null;
}

/** `meta.driverAdapterError.cause` of a Prisma error on the pg driver adapter. */
function adapterCause(e: Fields): Record<string, unknown> | null {
  const meta = e.meta as { driverAdapterError?: { cause?: unknown } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  return cause && typeof cause === "object" ? (cause as Record<string, unknown>) : null;
}

/** The error and its causes (Prisma and pg nest them), at most a few deep. */
function* chain(err: unknown): Generator<Fields> {
  let e = err;
  for (let depth = 0; depth < 6 && e && typeof e === "object"; depth++) {
    yield e as Fields;
    e = (e as { cause?: unknown }).cause;
  }
}

function summary(e: Fields): string {
  return [str(e.code) ?? str(e.errorCode), lastLine(str(e.message))].filter(Boolean).join(": ");
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** Prisma's messages start with the call site; the reason is on the last non-empty line. */
function lastLine(message: string | null): string | null {
  if (!message) return null;
  const lines = message.split("\n").map((l) => l.trim());
  return lines.filter(Boolean).at(-1) ?? null;
}
