import { type DomainErrorCode, isDomainError } from "@rhumbatron/core";
import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";

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

/** A DomainError as the TRPCError its code maps to; anything else unchanged. */
export function toTRPCError(err: unknown): unknown {
  if (err instanceof TRPCError && isDomainError(err.cause)) return toTRPCError(err.cause);
  if (!isDomainError(err)) return err;
  return new TRPCError({ code: DOMAIN_TO_TRPC[err.code], message: err.message, cause: err });
}
