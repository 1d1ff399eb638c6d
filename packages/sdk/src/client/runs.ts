import type { ClientBase } from "./base.ts";
import type { RunContextPacket, TaskTranscripts } from "./types.ts";

/** A Change's cancel and attempts, an Agent run's Context Packet, a Task's transcripts and retry. */
export function runMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /**
     * The Context Packet an Agent run was given: each item's ID, path, size and why it was picked,
     * the budget used, and what did not fit. `packet` is null until the run has recorded one.
     */
    async contextPacket(runId: string): Promise<RunContextPacket> {
      const t = await tenantId();
      return call(() => trpc.change.contextPacket.query({ tenantId: t, runId }));
    },

    /** Cancels a Change that is not final: its runs stop, its open Candidates are cancelled; a repeat answers the same. */
    async cancelChange(changeId: string, reason: string): Promise<{ cancelled: true; candidates: string[] }> {
      const t = await tenantId();
      return call(() => trpc.change.cancel.mutate({ tenantId: t, changeId, reason }));
    },

    /**
     * The attempts of the Change's Task that asked for several, side by side (docs/attempts.md):
     * Agent, run, lines changed, Candidate and checks, tokens and cost; null when none did.
     */
    async attempts(changeId: string) {
      const t = await tenantId();
      return call(() => trpc.change.attempts.query({ tenantId: t, changeId }));
    },

    /** Picks the attempt that goes on (approver token): the others' open Candidates are cancelled. */
    async pickAttempt(changeId: string, attempt: number): Promise<{ picked: number; cancelled: string[] }> {
      const t = await tenantId();
      return call(() => trpc.change.pickAttempt.mutate({ tenantId: t, changeId, attempt }));
    },

    /**
     * A Task's Agent runs, newest first; a program Agent's run carries its transcript: each step
     * (messages, tool calls, commands with exit codes, files edited), tokens, cost and hosts reached.
     */
    async taskTranscript(taskId: string): Promise<TaskTranscripts> {
      const t = await tenantId();
      return call(() => trpc.task.transcript.query({ tenantId: t, taskId }));
    },

    /** A new attempt of a failed or blocked Task, or of a completed one whose Change's newest Candidate conflicted or was rejected. */
    async retryTask(taskId: string): Promise<{ taskId: string; attempt: number }> {
      const t = await tenantId();
      return call(() => trpc.task.retry.mutate({ tenantId: t, taskId }));
    },
  };
}
