import type { RhumbatronConfig } from "../config.ts";
import { DomainError } from "../errors.ts";
import type { SandboxKind } from "./model.ts";

/**
 * Meter arithmetic (spec: Sandbox lifecycle table). packages/db applies these decisions under a
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

/** Refused when used + reserved + this reservation would pass the monthly meter; landing exactly on it is allowed. */
export function decideReservation(
  input: { usedSeconds: number; reservedSeconds: number; request: SandboxKind },
  config: SandboxConfig,
): ReservationDecision {
  const used = count(input.usedSeconds, "used seconds");
  const reserved = count(input.reservedSeconds, "reserved seconds");
  const reserve = reservationSeconds(input.request, config);
  const cap = config.sandbox.monthlySeconds;
  if (used + reserved + reserve <= cap) return { ok: true, reserve };
  return {
    ok: false,
    reason: `sandbox monthly meter: ${used} s used + ${reserved} s reserved + ${reserve} s (${input.request}) would pass ${cap} s`,
  };
}

/** What a closed workspace costs: its wall time (whole seconds, rounded up) plus the idle tail before the Sandbox sleeps. */
export function settleSeconds(input: { wallSeconds: number; kind: SandboxKind }, config: SandboxConfig): number {
  return Math.ceil(count(input.wallSeconds, "wall seconds")) + idleTailSeconds(input.kind, config);
}

/** The meter's window: the UTC month, `YYYY-MM`. */
export function meterWindow(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
}
