import { DomainError, idSchema } from "@rhumbatron/core";
import { listTests, setTestQuarantine, TEST_LIST_FILTERS } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const checkId = z.string().trim().min(1).max(100);
const testId = z.string().min(1).max(2000);

/** A project's tests as their history reads, and their quarantine (docs/flaky-tests.md). */
export const testsRouter = router({
  /** Flaky, broken and quarantined tests by default (`filter`: one kind, or all), worst first. */
  list: tenantProcedure("viewer")
    .input(
      z.object({
        projectId: idSchema,
        filter: z.enum(TEST_LIST_FILTERS).default("troubled"),
        limit: z.number().int().min(1).max(1000).default(200),
      }),
    )
    .query(({ ctx, input }) =>
      listTests(
        ctx.db,
        { tenantId: input.tenantId, projectId: input.projectId, filter: input.filter, limit: input.limit },
        ctx.services.now(),
      ),
    ),
  /**
   * An admin quarantines a test the project's checks reported: its failure no longer blocks, and
   * every gate it lets through names it. A reason is required; the expiry defaults to
   * tests.quarantineDays from now and must be in the future.
   */
  quarantine: tenantProcedure("admin")
    .input(
      z.object({
        projectId: idSchema,
        checkId,
        testId,
        reason: z.string().trim().min(1, "say why the test is quarantined").max(500),
        expiresAt: z.iso.datetime({ offset: true }).optional(),
      }),
    )
    .mutation(({ ctx, input }) => {
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime()))
        throw new DomainError("INVALID_INPUT", "expiresAt is not a time");
      return setTestQuarantine(
        ctx.db,
        { ...pick(input), actorId: ctx.caller.userId, quarantine: { reason: input.reason, expiresAt } },
        ctx.services,
      );
    }),
  /** An admin takes a test out of quarantine: its failures block again. */
  release: tenantProcedure("admin")
    .input(z.object({ projectId: idSchema, checkId, testId }))
    .mutation(({ ctx, input }) =>
      setTestQuarantine(ctx.db, { ...pick(input), actorId: ctx.caller.userId, quarantine: null }, ctx.services),
    ),
});

const pick = (i: { tenantId: string; projectId: string; checkId: string; testId: string }) => ({
  tenantId: i.tenantId,
  projectId: i.projectId,
  checkId: i.checkId,
  testId: i.testId,
});
