import { idSchema, LANDING_QUEUE_STATES } from "@rhumbatron/core";
import { landingQueueStatus, listLandingQueue, setLandingPriority, setLandingQueue } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const id = idSchema;

/** The landing queue of a project (docs/landing.md). */
export const landingRouter = router({
  /** Each Change that lands when ready: its position, what it waits for and since when. */
  queue: tenantProcedure("viewer")
    .input(z.object({ projectId: id }))
    .query(({ ctx, input }) => listLandingQueue(ctx.db, { tenantId: input.tenantId, projectId: input.projectId })),
  /** Whether the queue runs, is paused or drains, and since when. */
  status: tenantProcedure("viewer")
    .input(z.object({ projectId: id }))
    .query(({ ctx, input }) => landingQueueStatus(ctx.db, { tenantId: input.tenantId, projectId: input.projectId })),
  /** An admin pauses (nothing lands), drains (only what was verifying lands) or resumes (running) the queue. */
  setState: tenantProcedure("admin")
    .input(z.object({ projectId: id, state: z.enum(LANDING_QUEUE_STATES) }))
    .mutation(({ ctx, input }) =>
      setLandingQueue(
        ctx.db,
        { tenantId: input.tenantId, projectId: input.projectId, state: input.state, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
  /**
   * An admin gives a waiting Change a priority (0 to 1000; higher lands first among the ready ones)
   * or moves it to the front ("front": one above the highest). PRECONDITION_FAILED for a Change not
   * waiting in the queue.
   */
  setPriority: tenantProcedure("admin")
    .input(z.object({ changeId: id, priority: z.union([z.number().int().min(0).max(1000), z.literal("front")]) }))
    .mutation(({ ctx, input }) =>
      setLandingPriority(
        ctx.db,
        { tenantId: input.tenantId, changeId: input.changeId, priority: input.priority, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
});
