import { DomainError } from "@rhumbatron/core";
import { unreachable } from "@rhumbatron/db";

/**
 * What a failure of the database client means for the caller, read from the error itself: the
 * database cannot be reached (UNAVAILABLE, 503: try again later; packages/db/src/reachability.ts
 * reads that) or Postgres refused a value of the input (Postgres' SQLSTATE, the pg driver adapter's
 * `kind`, Prisma's code; INVALID_INPUT, 400: a second net behind the zod schemas). Anything else stays what it was, an
 * unexpected failure.
 */
export function fromDatabaseError(err: unknown): DomainError | null {
  for (const e of chain(err)) {
    if (unreachable(e)) {
      return new DomainError("UNAVAILABLE", "the database cannot be reached; try again in a moment", {
        cause: summary(e),
      });
    }
    const value = refusedValue(e);
    if (value) return new DomainError("INVALID_INPUT", `the database refused a value of the input: ${value}`);
  }
  return null;
}

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
