import {
  AGENT_RUN_TRANSITIONS,
  type AgentRunStatus,
  type CandidateStatus,
  CHANGE_TRANSITIONS,
  type ChangeStatus,
  candidateStatusesInto,
  DomainError,
  statusesInto,
  TASK_TRANSITIONS,
  type TaskState,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import type { Tx } from "../transaction.ts";

/**
 * Every status move of a Candidate, a Change, a Task or an Agent run goes through these, and each
 * moves a row only if core's transition table lets its status go there (CANDIDATE_TRANSITIONS,
 * CHANGE_TRANSITIONS, TASK_TRANSITIONS, AGENT_RUN_TRANSITIONS): the tables decide. A row that moved
 * on meanwhile is left as it is; each returns how many moved, and `moveOne…` says CONFLICT when its
 * one row could not move. `among` narrows the starting statuses further.
 */
type Mover<S, W, D> = (tx: Tx | Db, where: W, to: S, o?: { data?: D; among?: readonly S[] }) => Promise<number>;

function from<S extends string>(table: Readonly<Record<S, readonly S[]>>, to: S, among?: readonly S[]): S[] {
  return statusesInto(table, to).filter((s) => among === undefined || among.includes(s));
}

export const moveCandidates: Mover<
  CandidateStatus,
  Prisma.CandidateWhereInput,
  Omit<Prisma.CandidateUpdateManyMutationInput, "status">
> = async (tx, where, to, o = {}) => {
  const statuses = candidateStatusesInto(to).filter((s) => o.among === undefined || o.among.includes(s));
  const moved = await tx.candidate.updateMany({
    where: { ...where, status: { in: statuses } },
    data: { ...o.data, status: to },
  });
  return moved.count;
};

export const moveChanges: Mover<
  ChangeStatus,
  Prisma.ChangeWhereInput,
  Omit<Prisma.ChangeUpdateManyMutationInput, "status">
> = async (tx, where, to, o = {}) => {
  const statuses = from(CHANGE_TRANSITIONS, to, o.among);
  const moved = await tx.change.updateMany({
    where: { ...where, status: { in: statuses } },
    data: { ...o.data, status: to },
  });
  return moved.count;
};

export const moveTasks: Mover<
  TaskState,
  Prisma.TaskWhereInput,
  Omit<Prisma.TaskUpdateManyMutationInput, "state">
> = async (tx, where, to, o = {}) => {
  const states = from(TASK_TRANSITIONS, to, o.among);
  const moved = await tx.task.updateMany({
    where: { ...where, state: { in: states } },
    data: { ...o.data, state: to },
  });
  return moved.count;
};

export const moveRuns: Mover<
  AgentRunStatus,
  Prisma.AgentRunWhereInput,
  Omit<Prisma.AgentRunUpdateManyMutationInput, "status">
> = async (tx, where, to, o = {}) => {
  const statuses = from(AGENT_RUN_TRANSITIONS, to, o.among);
  const moved = await tx.agentRun.updateMany({
    where: { ...where, status: { in: statuses } },
    data: { ...o.data, status: to },
  });
  return moved.count;
};

/** One row's move that must happen: CONFLICT (with the move named) when the table or a race refused it. */
export async function moveOne(what: string, to: string, moved: Promise<number>): Promise<void> {
  if ((await moved) !== 1)
    throw new DomainError("CONFLICT", `${what} cannot move to ${to} from where it is now; try again`);
}
