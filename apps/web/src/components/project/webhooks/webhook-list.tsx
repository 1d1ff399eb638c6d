"use client";

import type { WebhookSummary } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../../query-state.tsx";
import { DeliveryLog } from "./delivery-log.tsx";
import { WebhookEdit } from "./webhook-edit.tsx";

/** The project's webhooks, each with its delivery log, Edit, Pause or Resume, and Remove (admins). */
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
  const state = useWebhook(tenantId, projectId);
  const { editing, setEditing, remove, pause } = state;
  const actions = <WebhookActions tenantId={tenantId} hook={hook} state={state} />;
  return (
    <Panel title={hook.url} testId="webhook" actions={actions}>
      <div data-webhook-id={hook.id} data-paused={hook.paused} className="space-y-1 text-sm">
        {hook.paused && (
          <p data-testid="webhook-paused" className="text-amber-900">
            <span className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium">paused</span> No new deliveries:
            Events that happen while it is paused are not sent to it, not even after Resume. Deliveries already queued
            still run.
          </p>
        )}
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
        {pause.isError && (
          <p role="alert" className="text-red-700">
            Could not {hook.paused ? "resume" : "pause"}: {pause.error.message}
          </p>
        )}
        {remove.isError && (
          <p role="alert" className="text-red-700">
            Could not remove: {remove.error.message}
          </p>
        )}
        {editing && (
          <WebhookEdit tenantId={tenantId} projectId={projectId} hook={hook} onDone={() => setEditing(false)} />
        )}
      </div>
      <DeliveryLog tenantId={tenantId} webhookId={hook.id} />
    </Panel>
  );
}

type WebhookState = ReturnType<typeof useWebhook>;

/** Whether the hook's form is open, and its Pause or Resume and its Remove. */
function useWebhook(tenantId: string, projectId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const refresh = () =>
    queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ tenantId, projectId }) });
  const remove = useMutation(trpc.webhooks.remove.mutationOptions({ onSuccess: refresh }));
  const pause = useMutation(trpc.webhooks.update.mutationOptions({ onSuccess: refresh }));
  return { editing, setEditing, remove, pause };
}

/** Edit, Pause or Resume, and Remove (asked once more), in the hook's panel heading. */
function WebhookActions({
  tenantId,
  hook,
  state: { editing, setEditing, remove, pause },
}: {
  tenantId: string;
  hook: WebhookSummary;
  state: WebhookState;
}) {
  return (
    <div className="flex shrink-0 items-center gap-2">
      <button
        type="button"
        data-testid="edit-webhook"
        disabled={editing}
        onClick={() => setEditing(true)}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-60"
      >
        Edit
      </button>
      <button
        type="button"
        data-testid={hook.paused ? "resume-webhook" : "pause-webhook"}
        disabled={pause.isPending}
        onClick={() => {
          pause.reset();
          pause.mutate({ tenantId, webhookId: hook.id, paused: !hook.paused });
        }}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-60"
      >
        {hook.paused ? "Resume" : "Pause"}
      </button>
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
    </div>
  );
}
