import type { RhumbatronConfig } from "../config.ts";
import { DomainError } from "../errors.ts";

/**
 * The outbox row state machine (docs/protocol.md, The transactional outbox), as a pure function.
 *
 *   pending    --sent-------------> published
 *   pending    --send_failed------> retry_wait   (backoff 1 s, 2 s, 4 s … capped at 5 min)
 *   pending    --send_failed------> failed       (on the 10th failed attempt)
 *   pending    --no_binding-------> failed       (the stream has no producer binding)
 *   retry_wait --due--------------> pending      (once now >= nextAttemptAt)
 *
 * published and failed are final. last_error is kept on every failure.
 */
export const OUTBOX_STATES = ["pending", "retry_wait", "published", "failed"] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];

export interface OutboxRowState {
  state: OutboxState;
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
}

export type OutboxInput =
  | { kind: "sent" }
  | { kind: "send_failed"; error: string }
  | { kind: "no_binding"; stream: number }
  | { kind: "due" };

type OutboxPolicy = RhumbatronConfig["outbox"];

/** Seconds to wait after the n-th failed attempt (n >= 1): base * 2^(n-1), capped. */
export function outboxBackoffSeconds(failedAttempts: number, policy: OutboxPolicy): number {
  const exp = Math.min(failedAttempts - 1, 30);
  return Math.min(policy.backoffBaseSeconds * 2 ** Math.max(exp, 0), policy.backoffMaxSeconds);
}

export function transitionOutbox(
  row: OutboxRowState,
  input: OutboxInput,
  now: Date,
  policy: OutboxPolicy,
): OutboxRowState {
  const refuse = () =>
    new DomainError("PRECONDITION_FAILED", `outbox row in state ${row.state} cannot take ${input.kind}`, {
      state: row.state,
      input: input.kind,
    });
  switch (input.kind) {
    case "sent":
      if (row.state !== "pending") throw refuse();
      return { ...row, state: "published", nextAttemptAt: null };
    case "no_binding":
      if (row.state !== "pending") throw refuse();
      return {
        ...row,
        state: "failed",
        nextAttemptAt: null,
        lastError: `no producer binding for stream ${String(input.stream).padStart(2, "0")}`,
      };
    case "send_failed": {
      if (row.state !== "pending") throw refuse();
      const attempts = row.attempts + 1;
      if (attempts >= policy.maxAttempts) {
        return { state: "failed", attempts, nextAttemptAt: null, lastError: input.error };
      }
      const wait = outboxBackoffSeconds(attempts, policy);
      return {
        state: "retry_wait",
        attempts,
        nextAttemptAt: new Date(now.getTime() + wait * 1000),
        lastError: input.error,
      };
    }
    case "due":
      if (row.state !== "retry_wait") throw refuse();
      if (!row.nextAttemptAt || now.getTime() < row.nextAttemptAt.getTime()) throw refuse();
      return { ...row, state: "pending", nextAttemptAt: null };
  }
}

export function newOutboxRow(): OutboxRowState {
  return { state: "pending", attempts: 0, nextAttemptAt: null, lastError: null };
}
