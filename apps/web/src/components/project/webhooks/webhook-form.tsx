"use client";

import { EVENT_TYPES, type EventType, webhookEventTypesSchema, webhookUrlSchema } from "@rhumbatron/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../../trpc/client.tsx";
import { Field, SubmitButton, TextInput } from "../../form-controls.tsx";
import { Panel } from "../../query-state.tsx";
import { SecretShownOnce } from "../../secret-shown-once.tsx";

/** What a new hook is subscribed to until the admin says otherwise: what people act on. */
const SUGGESTED: EventType[] = ["approval.requested", "canonical.advanced", "candidate.rejected"];

/**
 * What is wrong with a hook's URL and Event types, by the server's own schemas (create and update
 * take the same), or null. The Event types come back in the catalogue's order.
 */
export function webhookInputProblem(url: string, types: ReadonlySet<EventType>): string | null {
  const eventTypes = EVENT_TYPES.filter((t) => types.has(t));
  const problem = [webhookUrlSchema.safeParse(url.trim()), webhookEventTypesSchema.safeParse(eventTypes)]
    .flatMap((r) => (r.success ? [] : r.error.issues.map((i) => i.message)))
    .join("; ");
  return problem || null;
}

/** The catalogue's Event types as checkboxes; `types` is what is ticked. */
export function EventTypeChoices({
  types,
  onChange,
}: {
  types: ReadonlySet<EventType>;
  onChange: (types: Set<EventType>) => void;
}) {
  function toggle(t: EventType) {
    const next = new Set(types);
    if (next.has(t)) next.delete(t);
    else next.add(t);
    onChange(next);
  }
  return (
    <fieldset>
      <legend className="mb-1 font-medium">Events</legend>
      <div className="grid gap-x-4 gap-y-1 sm:grid-cols-3">
        {EVENT_TYPES.map((t) => (
          <label key={t} className="flex items-center gap-2 font-mono text-xs">
            <input type="checkbox" checked={types.has(t)} onChange={() => toggle(t)} data-event-type={t} />
            {t}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * Subscribe a URL to Event types (admins). Checked in the browser with the server's own schemas;
 * the signing secret is shown once, after creation, like an API token.
 */
export function WebhookForm({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState<Set<EventType>>(new Set(SUGGESTED));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (r) => {
        setCreated({ url: r.webhook.url, secret: r.secret });
        setUrl("");
        void queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey({ tenantId, projectId }) });
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    create.reset();
    const problem = webhookInputProblem(url, types);
    setInvalid(problem);
    if (!problem) {
      create.mutate({ tenantId, projectId, url: url.trim(), eventTypes: EVENT_TYPES.filter((t) => types.has(t)) });
    }
  }
  const error = invalid ?? (create.isError ? create.error.message : null);
  return (
    <Panel title="New webhook" testId="webhook-form-panel">
      <form data-testid="webhook-form" onSubmit={submit} noValidate className="space-y-3 text-sm">
        <Field label="Payload URL">
          <TextInput
            name="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://hooks.example.com/rhumbatron"
            className="w-full"
          />
        </Field>
        <EventTypeChoices types={types} onChange={setTypes} />
        <SubmitButton testId="create-webhook" pending={create.isPending} pendingLabel="Creating…">
          Create webhook
        </SubmitButton>
        {error && (
          <p role="alert" data-testid="webhook-form-error" className="text-red-700">
            {error}
          </p>
        )}
      </form>
      {created && (
        <div className="mt-3">
          <SecretShownOnce
            testId="new-webhook"
            secretTestId="new-webhook-secret"
            secret={created.secret}
            noun="secret"
            onDone={() => setCreated(null)}
            advice={
              <>
                Each delivery carries <code>X-Rhumbatron-Signature: t=…,v1=…</code>: the hex HMAC-SHA256 of
                “&lt;t&gt;.&lt;raw body&gt;” with this secret. Check it (and that t is recent) before you trust a
                delivery.
              </>
            }
          >
            Webhook for {created.url} created. Its signing secret:
          </SecretShownOnce>
        </div>
      )}
    </Panel>
  );
}
