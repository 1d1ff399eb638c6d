"use client";

import { EVENT_TYPES, type EventType } from "@rhumbatron/core";
import type { WebhookSummary } from "@rhumbatron/db";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../../trpc/client.tsx";
import { Field, SubmitButton, TextInput } from "../../form-controls.tsx";
import { EventTypeChoices, webhookInputProblem } from "./webhook-form.tsx";

/**
 * Edit a hook's URL and Event types (admins), checked in the browser with the server's own schemas
 * as New webhook is; the server's refusal (a private address in prod, say) is shown as it words it.
 * The secret stays. The next Event is sent by the new settings; deliveries already queued go to the
 * URL the hook has when each is sent.
 */
export function WebhookEdit({
  tenantId,
  projectId,
  hook,
  onDone,
}: {
  tenantId: string;
  projectId: string;
  hook: WebhookSummary;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState(hook.url);
  const [types, setTypes] = useState<Set<EventType>>(new Set(hook.eventTypes));
  const [invalid, setInvalid] = useState<string | null>(null);
  const update = useMutation(
    trpc.webhooks.update.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ tenantId, projectId }) });
        onDone();
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    update.reset();
    const problem = webhookInputProblem(url, types);
    setInvalid(problem);
    if (!problem) {
      update.mutate({
        tenantId,
        webhookId: hook.id,
        url: url.trim(),
        eventTypes: EVENT_TYPES.filter((t) => types.has(t)),
      });
    }
  }
  const error = invalid ?? (update.isError ? update.error.message : null);
  return (
    <form
      data-testid="webhook-edit-form"
      onSubmit={submit}
      noValidate
      className="mt-2 space-y-3 rounded border border-slate-200 bg-slate-50 p-3 text-sm"
    >
      <Field label="Payload URL">
        <TextInput name="url" value={url} onChange={(e) => setUrl(e.target.value)} className="w-full" />
      </Field>
      <EventTypeChoices types={types} onChange={setTypes} />
      <div className="flex items-center gap-2">
        <SubmitButton testId="save-webhook" pending={update.isPending} pendingLabel="Saving…" compact>
          Save
        </SubmitButton>
        <button
          type="button"
          data-testid="cancel-webhook-edit"
          onClick={onDone}
          className="rounded border border-slate-300 bg-white px-3 py-1 text-sm"
        >
          Cancel
        </button>
      </div>
      {error && (
        <p role="alert" data-testid="webhook-edit-error" className="text-red-700">
          {error}
        </p>
      )}
    </form>
  );
}
