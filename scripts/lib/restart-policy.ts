import { constants } from "node:os";
import type { ExitReason } from "./processes.ts";

/**
 * When `npm start` restarts a crashed web or worker process or its embedded Postgres
 * (scripts/lib/supervisor.ts). Pure: the caller passes the time in, so the policy is tested to the
 * millisecond without timers. The systemd units in deploy/ apply the same numbers in production
 * (docs/production.md).
 */
export interface RestartPolicy {
  /** Delay before the first restart of a streak of crashes. */
  initialDelayMs: number;
  /** Each further crash in the streak doubles the delay, up to this. */
  maxDelayMs: number;
  /** At most this many restarts within any `windowMs`; a crash past that stops everything. */
  maxRestarts: number;
  windowMs: number;
  /** A process that ran at least this long before it crashed starts a new streak (1 s again). */
  stableAfterMs: number;
}

export const RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRestarts: 5,
  windowMs: 60_000,
  stableAfterMs: 60_000,
};

/** What the policy remembers of one process: when it was restarted, and the current streak. */
export interface RestartHistory {
  restartedAt: readonly number[];
  streak: number;
}

export const NO_RESTARTS: RestartHistory = { restartedAt: [], streak: 0 };

export type RestartDecision =
  | { restart: true; delayMs: number; restartsInWindow: number; history: RestartHistory }
  | { restart: false; restartsInWindow: number };

/** A process crashed at `at` after running `ranForMs`: restart it after a delay, or give up. */
export function decideRestart(
  history: RestartHistory,
  crash: { at: number; ranForMs: number },
  policy: RestartPolicy = RESTART_POLICY,
): RestartDecision {
  const recent = history.restartedAt.filter((t) => crash.at - t < policy.windowMs);
  if (recent.length >= policy.maxRestarts) return { restart: false, restartsInWindow: recent.length };
  const streak = crash.ranForMs >= policy.stableAfterMs ? 0 : history.streak;
  const delayMs = Math.min(policy.initialDelayMs * 2 ** streak, policy.maxDelayMs);
  return {
    restart: true,
    delayMs,
    restartsInWindow: recent.length + 1,
    history: { restartedAt: [...recent, crash.at], streak: streak + 1 },
  };
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/** "exit code 1", "killed by SIGKILL", "exit code 137 (SIGKILL)" (a shell or tsx passing a signal on). */
export function describeExit(r: ExitReason): string {
  if (r.error) return `could not start: ${r.error}`;
  if (r.signal) return `killed by ${r.signal}`;
  const viaSignal = r.code !== null && r.code > 128 ? SIGNAL_NAMES.get(r.code - 128) : undefined;
  return `exit code ${r.code}${viaSignal ? ` (${viaSignal})` : ""}`;
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);

/** The one line printed for each restart. */
export function restartLine(
  name: string,
  reason: ExitReason,
  d: { delayMs: number; restartsInWindow: number },
  policy: RestartPolicy = RESTART_POLICY,
): string {
  return (
    `${name} crashed: ${describeExit(reason)}; restarting it in ${seconds(d.delayMs)} ` +
    `(restart ${d.restartsInWindow} of at most ${policy.maxRestarts} within ${seconds(policy.windowMs)})`
  );
}

/** Why the supervisor stopped restarting `name`. */
export function giveUpLine(name: string, reason: ExitReason, policy: RestartPolicy = RESTART_POLICY): string {
  return (
    `${name} crashed again: ${describeExit(reason)}; it was restarted ${policy.maxRestarts} times within ` +
    `${seconds(policy.windowMs)} already, so it is not restarted again`
  );
}
