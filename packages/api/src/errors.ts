import { type DomainErrorCode, isDomainError } from "@rhumbatron/core";
import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { fromDatabaseError } from "./database-errors.ts";

/**
 * The one table from domain error codes to tRPC codes (and so to HTTP statuses). Core and db throw
 * DomainError; TRPCError exists only in packages/api. A Record makes a new domain code a compile error here.
 */
export const DOMAIN_TO_TRPC: Record<DomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  INVALID_INPUT: "BAD_REQUEST",
  INVALID_CONFIG: "INTERNAL_SERVER_ERROR",
  NOT_FOUND: "NOT_FOUND",
  FORBIDDEN: "FORBIDDEN",
  CONFLICT: "CONFLICT",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
};

/**
 * A DomainError as the TRPCError its code maps to; so too a database failure that says what it is
 * (unreachable: 503, a refused value: 400; database-errors.ts). Anything else unchanged.
 */
export function toTRPCError(err: unknown): unknown {
  if (err instanceof TRPCError) {
    if (isDomainError(err.cause)) return toTRPCError(err.cause);
    // tRPC wraps whatever a procedure threw in an INTERNAL_SERVER_ERROR; the database's own errors are read here.
    if (err.code === "INTERNAL_SERVER_ERROR" && err.cause) {
      const known = fromDatabaseError(err.cause);
      return known ? toTRPCError(known) : err;
    }
    return err;
  }
  if (isDomainError(err)) return new TRPCError({ code: DOMAIN_TO_TRPC[err.code], message: err.message, cause: err });
  const known = fromDatabaseError(err);
  return known ? toTRPCError(known) : err;
}
