"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady, Panel } from "../query-state.tsx";
import { Meter, SandboxMeter } from "./sandbox-meter.tsx";
import { OPS_REFETCH_MS } from "./types.ts";

/** Every queue, including the empty ones: available (depth), leased (in flight) and delayed. */
export function QueuesPanel({ tenantId, purposes }: { tenantId: string; purposes: readonly string[] }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.operations.queues.queryOptions({ tenantId }, { refetchInterval: OPS_REFETCH_MS }));
  let body: React.ReactNode;
  if (!q.isSuccess) body = <NotReady query={q} testId="queues" what="queues" label="Loading queues…" />;
  else
    body = (
      <table data-testid="queues" data-state="ready" className="w-full text-left text-sm">
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="py-1">Queue</th>
            <th>Available</th>
            <th>In flight (leased)</th>
            <th>Delayed</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {[...new Set([...purposes, ...q.data.map((r) => r.queue)])].map((purpose) => {
            const r = q.data.find((x) => x.queue === purpose);
            return (
              <tr
                key={purpose}
                data-testid={`queue-${purpose}`}
                data-depth={r?.depth ?? 0}
                data-in-flight={r?.in_flight ?? 0}
              >
                <td className="py-1 font-mono">{purpose}</td>
                <td>{r?.depth ?? 0}</td>
                <td>{r?.in_flight ?? 0}</td>
                <td>{r?.delayed ?? 0}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    );
  return (
    <Panel title="Queues (this tenant’s commands)" testId="operations-queues">
      {body}
    </Panel>
  );
}

/** Consumer lag per stream: head offset minus each subscription's committed offset. */
export function StreamLagPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.operations.streamLag.queryOptions({ tenantId }, { refetchInterval: OPS_REFETCH_MS }));
  let body: React.ReactNode;
  if (!q.isSuccess) body = <NotReady query={q} testId="stream-lag" what="stream lag" label="Loading stream lag…" />;
  else
    body = (
      <table data-testid="stream-lag" data-state="ready" className="w-full text-left text-sm">
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="py-1">Stream</th>
            <th>Head</th>
            <th>Largest lag</th>
            <th>Subscriptions (committed / lag)</th>
            <th>Your projects</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {q.data.map((s) => (
            <tr
              key={s.streamIndex}
              data-testid={`stream-lag-${s.streamIndex}`}
              data-lag={s.maxLag}
              className="align-top"
            >
              <td className="py-1 font-mono">{String(s.streamIndex).padStart(2, "0")}</td>
              <td className="font-mono">{s.headOffset}</td>
              <td className={s.maxLag > 0 ? "font-semibold text-amber-800" : ""}>{s.maxLag}</td>
              <td className="text-xs">
                {s.subscriptions.length === 0 ? (
                  <span className="text-slate-400">no consumer has read it yet</span>
                ) : (
                  <ul>
                    {s.subscriptions.map((sub) => (
                      <li key={sub.subscription} data-testid="stream-subscription">
                        <span className="font-mono">{sub.subscription}</span> {sub.committedOffset} /{" "}
                        <span className={sub.lag > 0 ? "text-amber-800" : "text-slate-500"}>{sub.lag}</span>
                        {sub.redeliverAt && sub.redeliverAt > new Date() && (
                          <span className="text-red-800"> · redelivery at {sub.redeliverAt.toLocaleTimeString()}</span>
                        )}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td className="text-xs text-slate-600">{s.projects.join(", ") || "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  return (
    <Panel title="Streams: consumer lag (environment-wide)" testId="operations-streams">
      {body}
    </Panel>
  );
}

/**
 * The tenant's Sandbox meter this month (used, reserved, budget, what used it; admins set the budget
 * here) and the overlap classifier's calls today against its cap.
 */
export function MetersPanel({ tenantId, canSetBudget }: { tenantId: string; canSetBudget: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.operations.meters.queryOptions({ tenantId }, { refetchInterval: OPS_REFETCH_MS }));
  let classifierBlock: React.ReactNode;
  if (!q.isSuccess) classifierBlock = <NotReady query={q} testId="meters" what="meters" label="Loading meters…" />;
  else {
    const { classifier } = q.data;
    classifierBlock = (
      <div data-testid="meters" data-state="ready">
        <div
          data-testid="classifier-calls"
          data-calls={classifier.calls}
          data-cap={classifier.cap}
          data-day={classifier.day}
          className="text-sm"
        >
          <div className="font-medium">Overlap classifier · {classifier.day}</div>
          <div className="text-slate-600">
            {classifier.calls} of {classifier.cap} calls today
            {classifier.calls >= classifier.cap ? " — cap reached: overlaps wake the Agent without a call" : ""}
          </div>
          <Meter used={classifier.calls} cap={classifier.cap} />
          <div className="mt-1 text-xs text-slate-500">environment {classifier.env}; the day is UTC</div>
        </div>
      </div>
    );
  }
  return (
    <Panel title="Meters" testId="operations-meters">
      <div className="grid gap-4 sm:grid-cols-2">
        <SandboxMeter tenantId={tenantId} canSetBudget={canSetBudget} />
        {classifierBlock}
      </div>
    </Panel>
  );
}
