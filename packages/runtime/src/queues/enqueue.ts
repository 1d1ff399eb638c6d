import {
  COMMAND_TYPES,
  type CommandEnvelope,
  type CommandType,
  commandCapWindow,
  commandEnvelopeSchema,
  commandPayloadProblem,
  DomainError,
  QUEUE_FOR_COMMAND,
  type QueuePurpose,
  type RhumbatronConfig,
} from "@rhumbatron/core";
import { type Nudger, pgNotifyNudger, pgNudgeChannel } from "../nudge.ts";
import { type SqlClient, type SqlDatabase, sql } from "../sql.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * Sending a command. Enqueue takes the caller's transaction, so a command is sent if and only if
 * the state change that caused it commits, and nudges the queue's consumer on commit. A command is
 * on a queue at most once: a second send with the same commandId is a duplicate and sends nothing.
 */
export interface EnqueueDeps {
  config: RhumbatronConfig;
  nudger: Nudger;
  now: () => Date;
  log?: (fields: Record<string, unknown>, message: string) => void;
}

export interface NewCommand {
  commandId: string;
  commandType: CommandType;
  projectId: string;
  changeId?: string | null;
  taskId?: string | null;
  payload: Record<string, unknown>;
  deadline?: Date | null;
  attempt?: number;
}

export type EnqueueResult =
  | { sent: true; duplicate: boolean; queue: QueuePurpose; commandId: string }
  | { sent: false; reason: "command_cap"; queue: QueuePurpose; commandId: string };

export const COMMAND_CAP_COUNTER = "commands_per_change_day";

/** The nudge channel of a queue's consumer (`integration` -> `queue_integration`). */
export const queueChannel = (purpose: QueuePurpose) => `queue_${purpose.replace(/-/g, "_")}`;

export function buildCommand(c: NewCommand, now: Date): CommandEnvelope {
  if (!(COMMAND_TYPES as readonly string[]).includes(c.commandType)) {
    throw new DomainError("INVALID_INPUT", `unknown command type ${c.commandType}`);
  }
  // Every envelope is checked against the command catalogue, however it was made.
  const problem = commandPayloadProblem(c.commandType, c.payload);
  if (problem) throw new DomainError("INVALID_INPUT", `${c.commandType} ${c.commandId}: ${problem}`);
  const parsed = commandEnvelopeSchema.safeParse({
    commandId: c.commandId,
    commandType: c.commandType,
    projectId: c.projectId,
    changeId: c.changeId ?? null,
    taskId: c.taskId ?? null,
    attempt: c.attempt ?? 0,
    createdAt: now.toISOString(),
    deadline: c.deadline ? c.deadline.toISOString() : null,
    payload: c.payload,
  });
  if (!parsed.success) throw new DomainError("INVALID_INPUT", `invalid command: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * Puts an envelope on a queue (no cap check); used by enqueueCommand and by operator retries.
 * With the Postgres nudger the nudge rides on the INSERT (one round trip); any other nudger is
 * called after it.
 */
export async function putOnQueue(
  ctx: TxContext,
  queue: QueuePurpose,
  envelope: CommandEnvelope,
  deps: EnqueueDeps,
  extra: { originQueue?: string; lastError?: string; deliveries?: number; availableAt?: Date } = {},
): Promise<boolean> {
  const insert = queueInsert(queue, envelope, deps, extra);
  if (deps.nudger === pgNotifyNudger) return insertAndNotify(ctx.tx, queue, insert);
  const inserted = await ctx.tx.$executeRaw(insert);
  if (inserted > 0) await deps.nudger.nudge(ctx, queueChannel(queue));
  return inserted > 0;
}

/** The queue row's INSERT; a command already on the queue inserts nothing. */
function queueInsert(
  queue: QueuePurpose,
  envelope: CommandEnvelope,
  deps: EnqueueDeps,
  extra: { originQueue?: string; lastError?: string; deliveries?: number; availableAt?: Date },
) {
  const now = deps.now();
  const availableAt = extra.availableAt ?? now;
  const expiresAt = new Date(now.getTime() + deps.config.queues.messageRetentionSeconds * 1000);
  return sql`
    INSERT INTO queue_messages (queue, command_id, command_type, project_id, change_id, task_id, envelope,
      available_at, enqueued_at, expires_at, origin_queue, last_error, deliveries)
    VALUES (${queue}, ${envelope.commandId}, ${envelope.commandType}, ${envelope.projectId}, ${envelope.changeId},
      ${envelope.taskId}, ${JSON.stringify(envelope)}::jsonb, ${availableAt}, ${now}, ${expiresAt},
      ${extra.originQueue ?? null}, ${extra.lastError ?? null}, ${extra.deliveries ?? 0})
    ON CONFLICT (queue, command_id) DO NOTHING`;
}

/**
 * The INSERT and the queue's NOTIFY in one statement (one round trip). NOTIFY is transactional like
 * the nudger's own: delivered only if the transaction it runs in commits.
 */
async function insertAndNotify(client: SqlClient, queue: QueuePurpose, insert: ReturnType<typeof queueInsert>) {
  // RETURNING runs once per inserted row: a duplicate returns no row and notifies nobody.
  const rows = await client.$queryRaw<unknown[]>`
    ${insert} RETURNING pg_notify(${pgNudgeChannel(queueChannel(queue))}, '')::text AS nudged`;
  return rows.length > 0;
}

/**
 * Sends a command that no state change of the caller's causes (an operator's retry, a sweep, a
 * client of the runtime that only queues work): validated like every other, deduplicated on its
 * command ID, and with the Postgres nudger sent and nudged in a single statement of its own, the
 * way a job queue's add-job is. A command of a Change counts against the Change's daily cap, which
 * needs a transaction: that one goes through enqueueCommand in one.
 */
export async function sendCommand(db: SqlDatabase, c: NewCommand, deps: EnqueueDeps): Promise<EnqueueResult> {
  if (c.changeId || deps.nudger !== pgNotifyNudger) return withTransaction(db, (ctx) => enqueueCommand(ctx, c, deps));
  const envelope = buildCommand(c, deps.now());
  const queue = QUEUE_FOR_COMMAND[c.commandType];
  const sent = await insertAndNotify(db, queue, queueInsert(queue, envelope, deps, {}));
  return { sent: true, duplicate: !sent, queue, commandId: c.commandId };
}

/**
 * Sends a command on its queue inside the caller's transaction. Every command of a Change counts
 * against config.causal.commandsPerChangePerDay; past the cap the command is refused, the refusal
 * is recorded (a metric point and a log line), and the caller's transaction goes on.
 */
export async function enqueueCommand(
  ctx: TxContext,
  c: NewCommand,
  deps: EnqueueDeps,
  options: { queue?: QueuePurpose } = {},
): Promise<EnqueueResult> {
  const now = deps.now();
  const envelope = buildCommand(c, now);
  const queue = options.queue ?? QUEUE_FOR_COMMAND[c.commandType];
  if (c.changeId) {
    // One statement: a command already on the queue is a duplicate and is not counted again.
    const cap = deps.config.causal.commandsPerChangePerDay;
    const window = commandCapWindow(now);
    const [row] = await ctx.tx.$queryRaw<{ duplicate: boolean; count: number | null }[]>`
      WITH existing AS (SELECT 1 FROM queue_messages WHERE queue = ${queue} AND command_id = ${c.commandId}),
      counted AS (
        INSERT INTO usage_counters (counter, scope_id, "window", count)
        SELECT ${COMMAND_CAP_COUNTER}, ${c.changeId}, ${window}, 1 WHERE NOT EXISTS (SELECT 1 FROM existing)
        ON CONFLICT (counter, scope_id, "window") DO UPDATE SET count = usage_counters.count + 1
        WHERE usage_counters.count < ${cap}
        RETURNING count)
      SELECT EXISTS (SELECT 1 FROM existing) AS duplicate, (SELECT count FROM counted) AS count`;
    if (row?.duplicate) return { sent: true, duplicate: true, queue, commandId: c.commandId };
    if (row?.count == null) {
      await recordCapRefusal(ctx, envelope, deps, now);
      return { sent: false, reason: "command_cap", queue, commandId: c.commandId };
    }
  }
  // Without a cap to count, the INSERT itself tells a duplicate (ON CONFLICT DO NOTHING).
  const sent = await putOnQueue(ctx, queue, envelope, deps);
  return { sent: true, duplicate: !sent, queue, commandId: c.commandId };
}

async function recordCapRefusal(ctx: TxContext, cmd: CommandEnvelope, deps: EnqueueDeps, now: Date) {
  await ctx.tx.$executeRaw`
    INSERT INTO metric_points (dataset, name, event_id, tenant_id, project_id, occurred_at)
    VALUES (${deps.config.eventRouter.metricsDataset}, 'command_cap_refused', ${`cap_${cmd.commandId}`},
      COALESCE((SELECT tenant_id FROM projects WHERE id = ${cmd.projectId}), 'unknown'), ${cmd.projectId}, ${now})
    ON CONFLICT DO NOTHING`;
  deps.log?.(
    {
      changeId: cmd.changeId,
      commandType: cmd.commandType,
      commandId: cmd.commandId,
      cap: deps.config.causal.commandsPerChangePerDay,
    },
    "command refused: the Change reached its daily command cap",
  );
}
