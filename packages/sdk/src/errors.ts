import { TRPCClientError } from "@trpc/client";

/**
 * What went wrong, in the API's words where the server answered (tRPC codes), plus the client-side
 * cases: UNREACHABLE (no HTTP answer at all), BAD_RESPONSE (something answered that is not the
 * Rhumbatron API) and ABORTED.
 */
export const RHUMBATRON_ERROR_CODES = [
  "UNAUTHORIZED",
  "FORBIDDEN",
  "NOT_FOUND",
  "CONFLICT",
  "BAD_REQUEST",
  "PRECONDITION_FAILED",
  "TOO_MANY_REQUESTS",
  "UNAVAILABLE",
  "INTERNAL",
  "UNREACHABLE",
  "BAD_RESPONSE",
  "ABORTED",
] as const;
export type RhumbatronErrorCode = (typeof RHUMBATRON_ERROR_CODES)[number];

/** One problem with an input, as the server's zod issues (or the client's own validation) name it. */
export interface InputIssue {
  path: string;
  message: string;
}

/** Every failure of the SDK: a code to branch on and a one-line message that says what to do. */
export class RhumbatronError extends Error {
  override readonly name = "RhumbatronError";
  readonly code: RhumbatronErrorCode;
  /** The HTTP status the server answered with, when it answered. */
  readonly httpStatus: number | null;
  /** Field-level problems of a rejected input (BAD_REQUEST). */
  readonly issues: InputIssue[];

  constructor(
    code: RhumbatronErrorCode,
    message: string,
    opts: { httpStatus?: number | null; issues?: InputIssue[]; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.httpStatus = opts.httpStatus ?? null;
    this.issues = opts.issues ?? [];
  }
}

export function isRhumbatronError(err: unknown): err is RhumbatronError {
  return err instanceof RhumbatronError;
}

const TRPC_TO_CODE: Record<string, RhumbatronErrorCode> = {
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  BAD_REQUEST: "BAD_REQUEST",
  PARSE_ERROR: "BAD_REQUEST",
  UNPROCESSABLE_CONTENT: "BAD_REQUEST",
  PAYLOAD_TOO_LARGE: "BAD_REQUEST",
  METHOD_NOT_SUPPORTED: "BAD_REQUEST",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
  SERVICE_UNAVAILABLE: "UNAVAILABLE",
  BAD_GATEWAY: "UNAVAILABLE",
  GATEWAY_TIMEOUT: "UNAVAILABLE",
  TIMEOUT: "UNAVAILABLE",
  INTERNAL_SERVER_ERROR: "INTERNAL",
  CLIENT_CLOSED_REQUEST: "ABORTED",
};

interface ErrorData {
  code?: string;
  httpStatus?: number;
  zodError?: { path: (string | number)[]; message: string }[] | null;
}

/** Joins lines and runs of spaces so every message fits on one line. */
const oneLine = (s: string) =>
  s
    .replace(/\s*\n\s*/g, "; ")
    .replace(/\s+/g, " ")
    .trim();

export const formatIssues = (issues: InputIssue[]) =>
  issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");

/**
 * The SDK's error for anything a call threw: a TRPCClientError with the server's code, a fetch that
 * never got an answer, or an answer that was not tRPC. `baseUrl` goes into the hints.
 */
export function toRhumbatronError(err: unknown, baseUrl: string): RhumbatronError {
  if (err instanceof RhumbatronError) return err;
  if (isAbort(err)) return new RhumbatronError("ABORTED", "the request was aborted", { cause: err });
  if (!(err instanceof TRPCClientError)) {
    return new RhumbatronError("INTERNAL", oneLine(err instanceof Error ? err.message : String(err)), { cause: err });
  }
  const data = (err.data ?? null) as ErrorData | null;
  if (!data?.code) return transportError(err, baseUrl);
  const code = TRPC_TO_CODE[data.code] ?? "INTERNAL";
  const httpStatus = data.httpStatus ?? null;
  const issues = (data.zodError ?? []).map((i) => ({ path: i.path.join("."), message: i.message }));
  const serverMessage = issues.length ? formatIssues(issues) : oneLine(err.message);
  return new RhumbatronError(code, withHint(code, serverMessage, baseUrl), { httpStatus, issues, cause: err });
}

/** The hint that turns the server's reason into something to do. */
function withHint(code: RhumbatronErrorCode, reason: string, baseUrl: string): string {
  switch (code) {
    case "UNAUTHORIZED":
      return `the token is missing, revoked or unknown; create one at ${baseUrl}/settings/tokens`;
    case "FORBIDDEN":
      return `${reason}; use a token with that role (create one at ${baseUrl}/settings/tokens) or ask a tenant admin to raise yours`;
    case "NOT_FOUND":
      return `${reason}; check the ID and that it belongs to this token's tenant`;
    case "CONFLICT":
      return `${reason}; reload it (for a Candidate: \`candidate show\` gives the current tree hash) and try again`;
    case "BAD_REQUEST":
      return `the server refused the input: ${reason}; fix it and try again`;
    case "PRECONDITION_FAILED":
      return `${reason}; wait until it is ready, or check its state first`;
    case "TOO_MANY_REQUESTS":
      return `${reason}; wait a moment and try again`;
    case "UNAVAILABLE":
      return `service unavailable: the server at ${baseUrl} cannot serve requests now (${reason}); if that lasts, check the server's log and that its database is running`;
    case "INTERNAL":
      return `the server failed (${reason}); see the server log, and report it if it repeats`;
    default:
      return reason;
  }
}

/** No tRPC error body: either nothing answered (fetch threw) or something else did. */
function transportError(err: TRPCClientError<never>, baseUrl: string): RhumbatronError {
  const cause = err.cause;
  const status = (err.meta?.response as Response | undefined)?.status ?? null;
  if (status === null && cause instanceof Error && !(cause instanceof SyntaxError)) {
    const why = rootCause(cause);
    return new RhumbatronError(
      "UNREACHABLE",
      `cannot reach ${baseUrl} (${why}); check --url or RHUMBATRON_URL and that the server is running (npm start)`,
      { cause: err },
    );
  }
  return new RhumbatronError(
    status !== null && status >= 502 && status <= 504 ? "UNAVAILABLE" : "BAD_RESPONSE",
    `${baseUrl} answered${status ? ` HTTP ${status}` : ""} but not as the Rhumbatron API; check --url or RHUMBATRON_URL`,
    { httpStatus: status, cause: err },
  );
}

/** "fetch failed" says nothing; the innermost cause names ECONNREFUSED, ENOTFOUND and so on. */
function rootCause(err: Error): string {
  let e: unknown = err;
  let text = err.message;
  for (let depth = 0; e instanceof Error && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    text = typeof code === "string" ? code : e.message || text;
    e = e.cause;
  }
  return oneLine(text);
}

function isAbort(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === "AbortError") return true;
  return err instanceof TRPCClientError && err.cause instanceof Error && err.cause.name === "AbortError";
}
