"use client";

import type { WebhookSummary } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../../query-state.tsx";
import { DeliveryLog } from "./delivery-log.tsx";

/** The project's webhooks, each with its delivery log and Remove (admins). */
export function WebhookList({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const hooks = useQuery(trpc.webhooks.list.queryOptions({ tenantId, projectId }));
  if (!hooks.isSuccess)
    return <NotReady query={hooks} testId="webhook-list" what="webhooks" label="Loading webhooks…" />;
  if (hooks.data.length === 0) return <Empty testId="webhook-list">No webhooks yet.</Empty>;
  return (
    <div data-testid="webhook-list" data-state="ready" className="space-y-4">
      {hooks.data.map((h) => (
        <Webhook key={h.id} tenantId={tenantId} projectId={projectId} hook={h} />
      ))}
    </div>
  );
}

function Webhook({ tenantId, projectId, hook }: { tenantId: string; projectId: string; hook: WebhookSummary }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.webhooks.remove.mutationOptions({
      onSuccess: () =>
        queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ tenantId, projectId }) }),
    }),
  );
  const actions = (
    <button
      type="button"
      data-testid="remove-webhook"
      disabled={remove.isPending}
      onClick={() => {
        if (window.confirm(`Remove the webhook for ${hook.url}? Its delivery log goes with it.`))
          remove.mutate({ tenantId, webhookId: hook.id });
      }}
      className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50 disabled:opacity-60"
    >
      Remove
    </button>
  );
  return (
    <Panel title={hook.url} testId="webhook" actions={actions}>
      <div data-webhook-id={hook.id} className="space-y-1 text-sm">
        <p className="text-slate-600">
          Sends{" "}
          {hook.eventTypes.map((t) => (
            <code key={t} className="mr-1 rounded bg-slate-100 px-1 text-xs">
              {t}
            </code>
          ))}
        </p>
        <p className="text-xs text-slate-500">
          Secret <span className="font-mono">{hook.secretPrefix}…</span> · created by{" "}
          {hook.createdBy.name ?? hook.createdBy.id} on {hook.createdAt.toLocaleString()}
        </p>
        {remove.isError && (
          <p role="alert" className="text-red-700">
            Could not remove: {remove.error.message}
          </p>
        )}
      </div>
      <DeliveryLog tenantId={tenantId} webhookId={hook.id} />
    </Panel>
  );
}
