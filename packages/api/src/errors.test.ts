import { DOMAIN_ERROR_CODES, DomainError, type DomainErrorCode } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createCallerFactory, publicProcedure, router, type Services } from "./trpc.ts";

// A procedure that throws whichever DomainError it is asked for, behind the same middleware as the API.
const testRouter = router({
  fail: publicProcedure.input(z.enum(DOMAIN_ERROR_CODES)).query(({ input }) => {
    throw new DomainError(input, `failed with ${input}`);
  }),
});
const caller = createCallerFactory(testRouter)({
  db: undefined as unknown as Db,
  services: undefined as unknown as Services,
  getCaller: async () => null,
});

// What a client sees for each domain code: the HTTP status is the contract.
const expectedStatus: Record<DomainErrorCode, number> = {
  INVALID_INPUT: 400,
  INVALID_CONFIG: 500,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  UNAVAILABLE: 503,
};

describe("domain errors leaving a procedure", () => {
  it.each(DOMAIN_ERROR_CODES)("%s keeps its message and gets its HTTP status", async (code) => {
    const err = await caller.fail(code).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    const trpcError = err as TRPCError;
    expect(getHTTPStatusCodeFromError(trpcError)).toBe(expectedStatus[code]);
    expect(trpcError.message).toBe(`failed with ${code}`);
    expect(trpcError.cause).toBeInstanceOf(DomainError);
  });
});
