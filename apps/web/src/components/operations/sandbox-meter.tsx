"use client";

import { SANDBOX_BUDGET_MAX_SECONDS, type SandboxBudgetSource, sandboxBudgetSecondsSchema } from "@rhumbatron/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { SubmitButton } from "../form-controls.tsx";
import { NotReady } from "../query-state.tsx";
import { OPS_REFETCH_MS, type SandboxMeterReading } from "./types.ts";

const hours = (s: number) => (s >= 3600 ? `${(s / 3600).toFixed(1)} h` : `${Math.round(s / 60)} min`);

const SOURCE: Record<SandboxBudgetSource, string> = {
  tenant: "this tenant's budget",
  setting: "the deployment's RHUMBATRON_SANDBOX_MONTHLY_SECONDS",
  default: "the default budget",
};

export function Meter({ used, extra = 0, cap }: { used: number; extra?: number; cap: number }) {
  const pct = (n: number) => `${Math.min((n / Math.max(cap, 1)) * 100, 100)}%`;
  const full = used + extra >= cap;
  return (
    <div className="mt-1 flex h-2 w-full overflow-hidden rounded bg-slate-100" aria-hidden="true">
      <div className={full ? "bg-red-500" : "bg-slate-700"} style={{ width: pct(used) }} />
      <div className="bg-slate-400" style={{ width: pct(extra) }} />
    </div>
  );
}

/**
 * The tenant's Sandbox meter this month (docs/sandbox.md, the meter): used + reserved against
 * the budget and where the budget comes from, what used the seconds (by kind and the biggest
 * Changes), and for admins a form to set the tenant's own budget.
 */
export function SandboxMeter({ tenantId, canSetBudget }: { tenantId: string; canSetBudget: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.sandbox.meter.queryOptions({ tenantId }, { refetchInterval: OPS_REFETCH_MS }));
  if (!q.isSuccess) return <NotReady query={q} testId="sandbox-meter" what="the Sandbox meter" label="Loading…" />;
  const m = q.data;
  const cap = m.budget.seconds;
  // A workspace starts only with its whole reservation left (docs/sandbox.md, the meter).
  const exhausted = m.remainingSeconds < m.reservationSeconds.agent;
  const noCandidate = !exhausted && m.remainingSeconds < m.reservationSeconds.candidate;
  return (
    <div
      data-testid="sandbox-meter"
      data-state="ready"
      data-used={m.usedSeconds}
      data-reserved={m.reservedSeconds}
      data-cap={cap}
      data-source={m.budget.source}
      data-window={m.window}
      className="space-y-2 text-sm"
    >
      <div className="font-medium">Sandbox meter · {m.window}</div>
      <div className="text-slate-600">
        {m.usedSeconds} s used ({hours(m.usedSeconds)}) + {m.reservedSeconds} s reserved of {cap} s ({hours(cap)}) ·{" "}
        {m.remainingSeconds} s left
      </div>
      <Meter used={m.usedSeconds} extra={m.reservedSeconds} cap={cap} />
      <div data-testid="sandbox-budget-source" className="text-xs text-slate-500">
        Budget: {SOURCE[m.budget.source]}
        {m.budget.updatedBy &&
          `, set by ${m.budget.updatedBy.name ?? m.budget.updatedBy.userId}${
            m.budget.updatedAt ? ` on ${new Date(m.budget.updatedAt).toISOString().slice(0, 10)}` : ""
          }`}
        {m.budget.source !== "default" && ` (default ${m.defaultSeconds} s)`}. Local Sandboxes are charged the seconds
        their commands' workspaces ran; the meter is this tenant's, the month is UTC.
      </div>
      {(exhausted || noCandidate) && (
        <p role="alert" data-testid="sandbox-exhausted" className="text-red-800">
          {exhausted
            ? "This month's Sandbox budget is exhausted: new agent runs and Candidate checks are refused."
            : `Less than a Candidate check's ${m.reservationSeconds.candidate} s is left: new verifications are refused.`}
          {canSetBudget ? " Raise the budget below." : " Ask a tenant admin to raise it."}
        </p>
      )}
      <Usage meter={m} />
      {canSetBudget && <SandboxBudgetForm tenantId={tenantId} current={cap} />}
    </div>
  );
}

/** What used the month's seconds: agent runs vs Candidate checks, and the Changes that used the most. */
function Usage({ meter }: { meter: SandboxMeterReading }) {
  if (meter.byKind.length === 0 && meter.openReservations === 0) {
    return <p className="text-xs text-slate-500">Nothing has run in the Sandbox this month.</p>;
  }
  const kind = (k: string) => meter.byKind.find((x) => x.kind === k);
  return (
    <div data-testid="sandbox-usage" className="text-xs text-slate-600">
      <p>
        Agent runs: {kind("agent")?.seconds ?? 0} s ({kind("agent")?.runs ?? 0}) · Candidate checks:{" "}
        {kind("candidate")?.seconds ?? 0} s ({kind("candidate")?.runs ?? 0})
        {meter.openReservations > 0 && ` · ${meter.openReservations} running now`}
      </p>
      {meter.topChanges.length > 0 && (
        <table className="mt-1 w-full text-left">
          <thead className="text-slate-500">
            <tr>
              <th className="py-0.5 font-normal">Most used by</th>
              <th className="font-normal">Project</th>
              <th className="font-normal">Seconds</th>
              <th className="font-normal">Runs</th>
            </tr>
          </thead>
          <tbody>
            {meter.topChanges.map((c) => (
              <tr key={c.changeId ?? "none"} data-testid="sandbox-top-change" data-seconds={c.seconds}>
                <td className="py-0.5">{c.changeId ? (c.title ?? c.changeId) : "no Change"}</td>
                <td>{c.projectName ?? "—"}</td>
                <td className="font-mono">{c.seconds}</td>
                <td>{c.runs}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** "18000 s = 5 h" for the number in the field, or null while it is not a number of seconds. */
export function secondsInHours(value: string): string | null {
  const seconds = Number(value.trim());
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0) return null;
  const hours = Math.round((seconds / 3600) * 10) / 10;
  return `${seconds} s = ${hours} h`;
}

/** The tenant's own monthly budget in seconds (admins); checked here with the server's own schema. */
function SandboxBudgetForm({ tenantId, current }: { tenantId: string; current: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(current));
  const [invalid, setInvalid] = useState<string | null>(null);
  const save = useMutation(
    trpc.sandbox.setBudget.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.sandbox.meter.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.operations.meters.queryKey() }),
        ]),
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    save.reset();
    const parsed = sandboxBudgetSecondsSchema.safeParse(value.trim() === "" ? Number.NaN : Number(value));
    if (!parsed.success) {
      setInvalid(`The budget ${parsed.error.issues[0]?.message ?? "is invalid"}`);
      return;
    }
    setInvalid(null);
    save.mutate({ tenantId, monthlySeconds: parsed.data });
  }

  const error = invalid ?? (save.isError ? save.error.message : null);
  return (
    <form
      data-testid="sandbox-budget-form"
      data-state={save.isPending ? "saving" : error ? "error" : save.isSuccess ? "saved" : "idle"}
      onSubmit={submit}
      noValidate
      className="space-y-1 rounded border border-slate-200 bg-slate-50 p-2"
    >
      <div className="flex flex-wrap items-end gap-2">
        <label className="flex flex-col gap-1">
          <span className="text-xs text-slate-500">Monthly budget for this tenant (seconds)</span>
          <input
            data-testid="sandbox-budget-seconds"
            inputMode="numeric"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            aria-invalid={invalid !== null}
            max={SANDBOX_BUDGET_MAX_SECONDS}
            className="w-40 rounded border border-slate-300 px-2 py-1 font-mono text-xs"
          />
        </label>
        <SubmitButton testId="sandbox-budget-save" pending={save.isPending} pendingLabel="Saving…" compact>
          Set budget
        </SubmitButton>
      </div>
      <p className="text-xs text-slate-500">
        Applies from the next agent run or Candidate check, this month included
        {secondsInHours(value) && <span data-testid="sandbox-budget-hours"> ({secondsInHours(value)})</span>}.
      </p>
      {error && (
        <p role="alert" data-testid="sandbox-budget-error" className="text-red-800">
          {error}
        </p>
      )}
      {save.isSuccess && !error && (
        <p
          role="status"
          data-testid="sandbox-budget-saved"
          data-resumed-tasks={save.data.resumedTasks}
          className={save.data.belowUsage ? "text-amber-800" : "text-emerald-800"}
        >
          {save.data.changed ? "Saved. " : "Unchanged: that is already the budget. "}
          {save.data.note}
        </p>
      )}
    </form>
  );
}
