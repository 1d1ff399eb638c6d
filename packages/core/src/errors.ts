/**
 * Every failure the domain or the data layer reports on purpose carries a code from this list.
 * packages/api maps codes to tRPC codes in one table; nothing parses error messages.
 */
export const DOMAIN_ERROR_CODES = [
  "INVALID_INPUT",
  "INVALID_CONFIG",
  "NOT_FOUND",
  "FORBIDDEN",
  "CONFLICT",
  "PRECONDITION_FAILED",
  "UNAVAILABLE",
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: DomainErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.details = details;
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}
