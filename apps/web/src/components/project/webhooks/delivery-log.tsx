"use client";

import type { DeliveryLogEntry } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../../trpc/client.tsx";
import { DataTable } from "../../data-table.tsx";
import { ActionError } from "../../notice.tsx";

/** While a delivery is pending or retrying, the log asks again this often. */
const LOG_REFETCH_MS = 5_000;

const STATUS_COLOR: Record<DeliveryLogEntry["status"], string> = {
  pending: "bg-slate-100 text-slate-700",
  retrying: "bg-amber-100 text-amber-900",
  succeeded: "bg-emerald-100 text-emerald-900",
  failed: "bg-red-100 text-red-900",
};

/**
 * A hook's delivery log, newest first: each delivery's status and each of its attempts (HTTP status,
 * duration, error, time), with Redeliver: a new delivery of the same Event.
 */
export function DeliveryLog({ tenantId, webhookId }: { tenantId: string; webhookId: string }) {
  const { log, redeliver } = useDeliveryLog(tenantId, webhookId);
  if (!log.isSuccess) {
    return (
      <p
        data-testid="delivery-log"
        data-state={log.isPending ? "loading" : "error"}
        className="mt-3 text-sm text-slate-500"
      >
        {log.isPending ? "Loading deliveries…" : `Could not load deliveries: ${log.error?.message ?? ""}`}
      </p>
    );
  }
  if (log.data.length === 0) {
    return (
      <p data-testid="delivery-log" data-state="empty" className="mt-3 text-sm text-slate-500">
        No deliveries yet: the next subscribed Event is sent here.
      </p>
    );
  }
  return (
    <div className="mt-3">
      {redeliver.isError && <ActionError className="mb-2">Could not redeliver: {redeliver.error.message}</ActionError>}
      <DataTable testId="delivery-log" size="xs" alignTop columns={["Event", "Delivery", "Status", "Attempts", ""]}>
        {log.data.map((d) => (
          <DeliveryRow key={d.id} d={d} tenantId={tenantId} redeliver={redeliver} />
        ))}
      </DataTable>
    </div>
  );
}

type DeliveryLogState = ReturnType<typeof useDeliveryLog>;
type Delivery = NonNullable<DeliveryLogState["log"]["data"]>[number];

/** The hook's deliveries, asked again while one is still on its way, and Redeliver. */
function useDeliveryLog(tenantId: string, webhookId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const log = useQuery(
    trpc.webhooks.deliveries.queryOptions(
      { tenantId, webhookId, limit: 50 },
      {
        refetchInterval: (q) =>
          q.state.data?.some((d) => d.status === "pending" || d.status === "retrying") ? LOG_REFETCH_MS : false,
      },
    ),
  );
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.webhooks.deliveries.pathKey() }),
    }),
  );
  return { log, redeliver };
}

/** One delivery: its Event, when it was made (and what it redelivers), its status, its attempts and Redeliver. */
function DeliveryRow({
  d,
  tenantId,
  redeliver,
}: {
  d: Delivery;
  tenantId: string;
  redeliver: DeliveryLogState["redeliver"];
}) {
  return (
    <tr data-testid="delivery" data-delivery-id={d.id} data-status={d.status}>
      <td className="py-2 pr-2">
        <code>{d.eventType}</code>
        <div className="font-mono text-slate-500">{d.eventId}</div>
      </td>
      <td className="py-2 pr-2">
        <div className="font-mono">{d.id}</div>
        <div className="text-slate-500">{d.createdAt.toLocaleString()}</div>
        {d.redeliveryOf && (
          <div className="text-slate-500">
            redelivery of <span className="font-mono">{d.redeliveryOf}</span>
            {d.requestedBy ? ` by ${d.requestedBy.name ?? d.requestedBy.id}` : ""}
          </div>
        )}
      </td>
      <td className="py-2 pr-2">
        <span data-testid="delivery-status" className={`rounded px-1.5 py-0.5 ${STATUS_COLOR[d.status]}`}>
          {d.status}
        </span>
        {d.nextAttemptAt && <div className="text-slate-500">next try {d.nextAttemptAt.toLocaleTimeString()}</div>}
      </td>
      <td className="py-2 pr-2">
        <ol className="space-y-0.5">
          {d.attempts.map((a) => (
            <li key={a.attempt} data-testid="delivery-attempt" data-outcome={a.outcome}>
              #{a.attempt} {a.httpStatus === null ? "no answer" : `HTTP ${a.httpStatus}`} · {a.durationMs} ms ·{" "}
              {a.attemptedAt.toLocaleTimeString()}
              {a.error && <div className="break-all text-red-800">{a.error}</div>}
            </li>
          ))}
        </ol>
      </td>
      <td className="py-2 text-right">
        <button
          type="button"
          data-testid="redeliver"
          disabled={redeliver.isPending}
          onClick={() => redeliver.mutate({ tenantId, deliveryId: d.id })}
          className="rounded border border-slate-300 bg-white px-2 py-0.5 disabled:opacity-50"
        >
          Redeliver
        </button>
      </td>
    </tr>
  );
}
