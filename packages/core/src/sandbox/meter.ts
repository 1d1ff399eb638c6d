import type { RhumbatronConfig } from "../config.ts";
import { DomainError } from "../errors.ts";
import {
  BUDGET_BLOCKED_TASK_RESUMES,
  describeBudgetSource,
  RAISE_SANDBOX_BUDGET,
  resolveSandboxBudget,
  type SandboxBudget,
} from "./budget.ts";
import type { SandboxBilling, SandboxKind } from "./model.ts";

/**
 * Meter arithmetic (docs/protocol.md, The Sandbox). packages/db applies these decisions under a
 * row lock on usage_counters; everything here is pure so the boundaries are tested to the second.
 */
type SandboxConfig = Pick<RhumbatronConfig, "sandbox">;

export type Admission = "admit" | "too_many_workspaces";
export type ReservationDecision = { ok: true; reserve: number } | { ok: false; reason: string };

function count(n: number, what: string): number {
  if (!Number.isFinite(n) || n < 0) throw new DomainError("INVALID_INPUT", `${what} must be >= 0, got ${n}`);
  return n;
}

/** At most `openWorkspacesPerChange` (4) open workspaces per Change. */
export function decideAdmission(openWorkspacesForChange: number, config: SandboxConfig): Admission {
  return count(openWorkspacesForChange, "open workspaces") < config.sandbox.openWorkspacesPerChange
    ? "admit"
    : "too_many_workspaces";
}

export function reservationSeconds(kind: SandboxKind, config: SandboxConfig): number {
  return kind === "agent" ? config.sandbox.agentReservationSeconds : config.sandbox.candidateReservationSeconds;
}

export function idleTailSeconds(kind: SandboxKind, config: SandboxConfig): number {
  return kind === "agent" ? config.sandbox.agentIdleTailSeconds : config.sandbox.candidateIdleTailSeconds;
}

/**
 * Refused when used + reserved + this reservation would pass the budget; landing exactly on it is
 * allowed. `budget` is the tenant's (resolveSandboxBudget); without one, the deployment's or the
 * config default. A refusal says the budget is exhausted and how to raise it; an agent's also says
 * that the Task it blocks resumes by itself (a Candidate's check is rejected instead).
 */
export function decideReservation(
  input: { usedSeconds: number; reservedSeconds: number; request: SandboxKind; budget?: SandboxBudget },
  config: SandboxConfig,
): ReservationDecision {
  const used = count(input.usedSeconds, "used seconds");
  const reserved = count(input.reservedSeconds, "reserved seconds");
  const reserve = reservationSeconds(input.request, config);
  const budget = input.budget ?? resolveSandboxBudget(null, config);
  const cap = budget.seconds;
  if (used + reserved + reserve <= cap) return { ok: true, reserve };
  return {
    ok: false,
    reason:
      `sandbox monthly meter: ${used} s used + ${reserved} s reserved + ${reserve} s (${input.request}) would pass ${cap} s ` +
      `(${describeBudgetSource(budget.source)}): this month's Sandbox budget is exhausted. ${RAISE_SANDBOX_BUDGET}` +
      (input.request === "agent" ? ` ${BUDGET_BLOCKED_TASK_RESUMES}` : ""),
  };
}

/**
 * What a closed workspace costs: its wall time in whole seconds, rounded up; with `container`
 * billing also the idle tail a cloud container stays awake before it sleeps. A local provider
 * (`measured`) stops when the run ends, so a tail would charge seconds nothing ran.
 */
export function settleSeconds(
  input: { wallSeconds: number; kind: SandboxKind; billing: SandboxBilling },
  config: SandboxConfig,
): number {
  const wall = Math.ceil(count(input.wallSeconds, "wall seconds"));
  return input.billing === "container" ? wall + idleTailSeconds(input.kind, config) : wall;
}

/** The meter's window: the UTC month, `YYYY-MM`. */
export function meterWindow(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
}
