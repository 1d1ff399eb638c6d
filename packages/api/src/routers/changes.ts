import {
  changeInput,
  DomainError,
  fixtureInput,
  idSchema,
  MAX_ATTEMPTS,
  requestIdSchema,
  safeText,
  validateWorkGraph,
} from "@rhumbatron/core";
import {
  cancelChange,
  createChange,
  getChange,
  listAttempts,
  listChangeCandidates,
  listChangeSets,
  listChanges,
  listTasks,
  pickAttempt,
  readChangeSetPatch,
  readRunContextPacket,
  readTaskTranscripts,
  requestFixture,
  retryTask,
  setLandWhenReady,
} from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const id = idSchema;

/** The Work Graph is checked at the edge too: a cycle or a dangling dependency never reaches the database. */
const graphChecked = changeInput.superRefine((c, ctx) => {
  try {
    validateWorkGraph(c.tasks);
  } catch (err) {
    const problems =
      err instanceof DomainError ? ((err.details?.problems as string[]) ?? [err.message]) : [String(err)];
    for (const message of problems) ctx.addIssue({ code: "custom", path: ["tasks"], message });
  }
});

export const changesRouter = router({
  /** Idempotent on clientRequestId: a repeat returns the first Change (created: false). */
  create: tenantProcedure("member")
    .input(
      z.object({
        projectId: id,
        clientRequestId: requestIdSchema,
        change: graphChecked,
        /** "Land when ready" (off by default): promoted without another click once verified and approved. */
        landWhenReady: z.boolean().default(false),
      }),
    )
    .mutation(({ ctx, input }) =>
      createChange(
        ctx.db,
        {
          tenantId: input.tenantId,
          projectId: input.projectId,
          clientRequestId: input.clientRequestId,
          createdBy: { kind: "user", id: ctx.caller.userId },
          input: input.change,
          landWhenReady: input.landWhenReady,
        },
        ctx.services,
      ),
    ),
  get: tenantProcedure("viewer")
    .input(z.object({ changeId: id }))
    .query(({ ctx, input }) => getChange(ctx.db, { tenantId: input.tenantId, changeId: input.changeId })),
  list: tenantProcedure("viewer")
    .input(z.object({ projectId: id, limit: z.number().int().min(1).max(200).default(50) }))
    .query(({ ctx, input }) =>
      listChanges(ctx.db, { tenantId: input.tenantId, projectId: input.projectId, limit: input.limit }),
    ),
  /** The ChangeSets the Change's Agents published (metadata; the patch text comes from `patch`). */
  changeSets: tenantProcedure("viewer")
    .input(z.object({ changeId: id }))
    .query(({ ctx, input }) => listChangeSets(ctx.db, { tenantId: input.tenantId, changeId: input.changeId })),
  /** The Candidates composed from the Change, newest first. */
  candidates: tenantProcedure("viewer")
    .input(z.object({ changeId: id }))
    .query(({ ctx, input }) => listChangeCandidates(ctx.db, { tenantId: input.tenantId, changeId: input.changeId })),
  /** One ChangeSet's stored patch (a unified diff, at most the configured 512 KB), read from the blob store. */
  patch: tenantProcedure("viewer")
    .input(z.object({ changeSetId: id }))
    .query(({ ctx, input }) =>
      readChangeSetPatch(ctx.db, ctx.services.blobs, { tenantId: input.tenantId, changeSetId: input.changeSetId }),
    ),
  /** The Context Packet one of the Change's Agent runs was given: its items (ID, path, size, why) and what did not fit. */
  contextPacket: tenantProcedure("viewer")
    .input(z.object({ runId: id }))
    .query(({ ctx, input }) => readRunContextPacket(ctx.db, { tenantId: input.tenantId, runId: input.runId })),
  /**
   * The attempts of the Change's Task that asked for several, side by side (docs/attempts.md):
   * each one's Agent, run, ChangeSet size, Candidate and checks, tokens and cost; null when none did.
   */
  attempts: tenantProcedure("viewer")
    .input(z.object({ changeId: id }))
    .query(({ ctx, input }) => listAttempts(ctx.db, { tenantId: input.tenantId, changeId: input.changeId })),
  /**
   * Picks the attempt that goes on (approvers, as approving does): its Candidate may land, the other
   * attempts' open Candidates are cancelled. PRECONDITION_FAILED when the attempt has no verified
   * Candidate, or the Change asked for no attempts.
   */
  pickAttempt: tenantProcedure("approver")
    .input(z.object({ changeId: id, attempt: z.number().int().min(1).max(MAX_ATTEMPTS) }))
    .mutation(({ ctx, input }) =>
      pickAttempt(
        ctx.db,
        { tenantId: input.tenantId, changeId: input.changeId, attempt: input.attempt, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
  /** Turns "land when ready" on or off; on for a ready Change, it lands at once (in queue order). */
  setLanding: tenantProcedure("member")
    .input(z.object({ changeId: id, landWhenReady: z.boolean() }))
    .mutation(({ ctx, input }) =>
      setLandWhenReady(
        ctx.db,
        { tenantId: input.tenantId, changeId: input.changeId, on: input.landWhenReady, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
  cancel: tenantProcedure("member")
    .input(z.object({ changeId: id, reason: safeText(2000).trim().min(1, "say why") }))
    .mutation(({ ctx, input }) =>
      cancelChange(
        ctx.db,
        { tenantId: input.tenantId, changeId: input.changeId, actorId: ctx.caller.userId, reason: input.reason },
        ctx.services,
      ),
    ),
});

export const tasksRouter = router({
  list: tenantProcedure("viewer")
    .input(z.object({ changeId: id }))
    .query(({ ctx, input }) => listTasks(ctx.db, { tenantId: input.tenantId, changeId: input.changeId })),
  /** The Task's Agent runs, newest first, with the transcript a program Agent left (steps, tokens, cost, hosts). */
  transcript: tenantProcedure("viewer")
    .input(z.object({ taskId: id }))
    .query(({ ctx, input }) =>
      readTaskTranscripts(ctx.db, ctx.services.blobs, { tenantId: input.tenantId, taskId: input.taskId }),
    ),
  /** A new attempt of a failed or blocked Task, or of a completed one whose Change's newest Candidate conflicted or was rejected. */
  retry: tenantProcedure("member")
    .input(z.object({ taskId: id }))
    .mutation(({ ctx, input }) =>
      retryTask(ctx.db, { tenantId: input.tenantId, taskId: input.taskId, actorId: ctx.caller.userId }, ctx.services),
    ),
  /**
   * A person's own ChangeSet for a ready, failed or blocked Task (docs/agents.md, Publishing a fix by hand):
   * whole files or deletions, at most 512 KB, sent as fixture.publish; the worker commits them,
   * publishes the ChangeSet and completes the Task. The same request again is the same command.
   */
  publishFixture: tenantProcedure("member")
    .input(z.object({ taskId: id }))
    .input(fixtureInput)
    .mutation(({ ctx, input }) =>
      requestFixture(
        ctx.db,
        {
          tenantId: input.tenantId,
          taskId: input.taskId,
          actorId: ctx.caller.userId,
          input: { summary: input.summary, files: input.files },
        },
        ctx.services,
      ),
    ),
});
