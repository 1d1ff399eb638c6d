import { DomainError } from "@rhumbatron/core";
import type { TxContext } from "./transaction.ts";

/**
 * Nudges wake the worker right after a write commits, so it does not wait for its next cron tick.
 * The writing side calls `nudge` INSIDE its transaction; the nudge is delivered only if that
 * transaction commits (ARCHITECTURE.md, "Nudge on commit"). A lost nudge only delays work: every
 * worker function also runs on a cron, so nudges are a latency optimisation, never the only trigger.
 */
export interface Nudger {
  nudge(ctx: TxContext, channel: string, payload?: string): Promise<void>;
  /**
   * Set by a nudger whose nudge is exactly `pg_notify(pgNudgeChannel(channel), payload ?? '')`: a
   * writer may then issue it inside a statement it sends anyway (appendToOutbox, domainWrite)
   * instead of a round trip of its own. Nudgers without it are always called through `nudge`.
   */
  readonly inStatement?: boolean;
}

/** The transactions (by their client) that sent a nudge already, per channel and payload. */
const nudgedIn = new WeakMap<object, Set<string>>();

/**
 * True the first time a transaction asks for this channel and payload, false after: a writer that
 * runs many times in one transaction (appendToOutbox) calls a nudger that is not `inStatement` once,
 * so an after-commit nudger sends once per commit. (Such a nudge survives a rolled-back savepoint:
 * after-commit hooks are kept. A pg_notify nudge would not, which is why `inStatement` nudgers are
 * issued in every statement instead; Postgres folds the repeats of one transaction into one.)
 */
export function firstNudgeInTransaction(ctx: TxContext, channel: string, payload?: string): boolean {
  const key = `${channel}\u0000${payload ?? ""}`;
  const sent = nudgedIn.get(ctx.tx) ?? new Set<string>();
  nudgedIn.set(ctx.tx, sent);
  if (sent.has(key)) return false;
  sent.add(key);
  return true;
}

export const NUDGE_CHANNEL_PREFIX = "rhumbatron_";
/** Postgres truncates identifiers to 63 bytes and pg_notify rejects longer channel names. */
const PG_MAX_IDENTIFIER = 63;
const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;
/** Postgres refuses NOTIFY payloads of 8000 bytes or more (in the default build). */
const PG_MAX_PAYLOAD_BYTES = 7999;

/** Validates a bare channel name (`heartbeat`) and returns it; throws INVALID_INPUT otherwise. */
export function validateNudgeChannel(channel: string): string {
  if (!CHANNEL.test(channel) || NUDGE_CHANNEL_PREFIX.length + channel.length > PG_MAX_IDENTIFIER) {
    throw new DomainError(
      "INVALID_INPUT",
      `nudge channel "${channel}" must match ${CHANNEL.source} and be at most ${PG_MAX_IDENTIFIER - NUDGE_CHANNEL_PREFIX.length} characters`,
    );
  }
  return channel;
}

/** The Postgres channel a bare channel name maps to (`heartbeat` -> `rhumbatron_heartbeat`). */
export function pgNudgeChannel(channel: string): string {
  return NUDGE_CHANNEL_PREFIX + validateNudgeChannel(channel);
}

function validatePayload(payload: string | undefined): string {
  const value = payload ?? "";
  if (Buffer.byteLength(value, "utf8") > PG_MAX_PAYLOAD_BYTES) {
    throw new DomainError("INVALID_INPUT", `nudge payload is larger than ${PG_MAX_PAYLOAD_BYTES} bytes`);
  }
  return value;
}

/** For the local executor: NOTIFY inside the transaction; Postgres delivers it only on commit. */
export const pgNotifyNudger: Nudger = {
  inStatement: true,
  async nudge(ctx, channel, payload) {
    const name = pgNudgeChannel(channel);
    const value = validatePayload(payload);
    await ctx.tx.$executeRaw`SELECT pg_notify(${name}, ${value})`;
  },
};

/**
 * For senders outside Postgres (Inngest events): sends once the transaction has committed.
 * `send` receives the bare, validated channel name. packages/db must not import inngest, so the
 * caller supplies `send`.
 */
export function afterCommitNudger(send: (channel: string, payload: string | undefined) => Promise<void>): Nudger {
  return {
    async nudge(ctx, channel, payload) {
      validateNudgeChannel(channel);
      validatePayload(payload);
      ctx.afterCommit(() => send(channel, payload));
    },
  };
}

/** The Inngest event a nudge on `channel` becomes (`heartbeat` -> `rhumbatron/nudge.heartbeat`). */
export const NUDGE_EVENT_PREFIX = "rhumbatron/nudge.";
export function nudgeEventName(channel: string): string {
  return NUDGE_EVENT_PREFIX + validateNudgeChannel(channel);
}
