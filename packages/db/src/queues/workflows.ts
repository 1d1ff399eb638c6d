import { commandIds, DomainError } from "@rhumbatron/core";
import type { CommandHandler } from "@rhumbatron/runtime";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { TxContext } from "../transaction.ts";

/**
 * Workflow starts, directly or by a start command (docs/idempotency.md, the Workflow start rows).
 * The instance ID is the idempotency key (Candidate ID, release ID); the workflow_instances primary
 * key rejects a second instance in the database, whichever executor runs the workflow.
 */
export const WORKFLOWS = { verification: "candidate-verification", rerun: "check-rerun", release: "release" } as const;
export type WorkflowKind = keyof typeof WORKFLOWS;
/** Workflows started by a command (a check rerun is started by the request's own transaction). */
export type CommandStartedWorkflow = Exclude<WorkflowKind, "rerun">;

/** The channel that wakes a workflow's runner; check reruns run on the verification runner. */
export const workflowChannel = (kind: WorkflowKind) => `workflow_${kind === "rerun" ? "verification" : kind}`;

export async function startWorkflowInstance(
  ctx: TxContext,
  w: { kind: WorkflowKind; instanceId: string; input: Record<string, unknown>; startedBy: string },
  deps: EnqueueDeps,
): Promise<{ started: boolean }> {
  const inserted = await ctx.tx.$executeRaw`
    INSERT INTO workflow_instances (instance_id, workflow, input, started_by)
    VALUES (${w.instanceId}, ${WORKFLOWS[w.kind]}, ${JSON.stringify(w.input)}::jsonb, ${w.startedBy})
    ON CONFLICT (instance_id) DO NOTHING`;
  if (inserted > 0)
    for (const lane of runnerLanes(w.kind, deps.config)) await deps.nudger.nudge(ctx, workflowChannel(w.kind), lane);
  return { started: inserted > 0 };
}

/**
 * The runs of a worker a new instance wakes: verification has config.verification.concurrency
 * lanes, each running one instance at a time, so that many Candidates verify side by side (a
 * speculative stack's, docs/landing.md); every lane is woken and a free one claims the instance
 * (a busy one finds it claimed, or the next). Other workflows have one run.
 */
function runnerLanes(kind: WorkflowKind, config: EnqueueDeps["config"]): (string | undefined)[] {
  if (kind !== "verification") return [undefined];
  return Array.from({ length: config.verification.concurrency }, (_, i) => `lane${i}`);
}

/** The workflow-start command for a key: `cmd_<candidate>_verify` or `cmd_<release>_release`. */
export function workflowStartCommand(kind: CommandStartedWorkflow, key: string) {
  return kind === "verification"
    ? { commandId: commandIds.verify(key), commandType: "verification.start" as const, payload: { candidateId: key } }
    : { commandId: commandIds.release(key), commandType: "release.start" as const, payload: { releaseId: key } };
}

/**
 * Producer side: sends the start command; if the send itself fails, starts the workflow directly
 * (the send runs under a savepoint so its failure does not spoil the caller's transaction).
 */
export async function requestWorkflowStart(
  ctx: TxContext,
  r: {
    kind: CommandStartedWorkflow;
    key: string;
    projectId: string;
    changeId?: string | null;
    input?: Record<string, unknown>;
  },
  deps: EnqueueDeps,
  send: typeof enqueueCommand = enqueueCommand,
): Promise<{ via: "queue" | "direct"; duplicate: boolean }> {
  const cmd = workflowStartCommand(r.kind, r.key);
  await ctx.tx.$executeRaw`SAVEPOINT workflow_send`;
  try {
    const res = await send(
      ctx,
      { ...cmd, projectId: r.projectId, changeId: r.changeId ?? null, payload: { ...cmd.payload, ...(r.input ?? {}) } },
      deps,
    );
    if (!res.sent) throw new DomainError("UNAVAILABLE", `command refused: ${res.reason}`);
    await ctx.tx.$executeRaw`RELEASE SAVEPOINT workflow_send`;
    return { via: "queue", duplicate: res.duplicate };
  } catch {
    await ctx.tx.$executeRaw`ROLLBACK TO SAVEPOINT workflow_send`;
    const started = await startWorkflowInstance(
      ctx,
      { kind: r.kind, instanceId: r.key, input: { ...cmd.payload, ...(r.input ?? {}) }, startedBy: "producer" },
      deps,
    );
    return { via: "direct", duplicate: !started.started };
  }
}

/** Consumer side: starts the instance named by the command; a redelivery finds it and starts nothing. */
export function workflowStartHandler(deps: EnqueueDeps): CommandHandler {
  return {
    commandTypes: ["verification.start", "release.start"],
    async handle(ctx) {
      const { command } = ctx;
      const kind: CommandStartedWorkflow = command.commandType === "verification.start" ? "verification" : "release";
      const key = kind === "verification" ? command.payload.candidateId : command.payload.releaseId;
      if (typeof key !== "string" || key.length === 0) {
        throw new DomainError(
          "INVALID_INPUT",
          `${command.commandType} needs ${kind === "verification" ? "candidateId" : "releaseId"}`,
        );
      }
      if (command.commandId !== workflowStartCommand(kind, key).commandId) {
        throw new DomainError("INVALID_INPUT", `${command.commandId} does not match the instance ${key}`);
      }
      await startWorkflowInstance(
        ctx,
        { kind, instanceId: key, input: command.payload, startedBy: command.commandId },
        deps,
      );
      return "done";
    },
  };
}
