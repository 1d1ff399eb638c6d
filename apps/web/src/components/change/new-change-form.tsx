"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { exampleChange } from "../../lib/change-example.ts";
import { type ChangeDraft, emptyDraft, type FieldErrors, fieldErrorsOf, validateDraft } from "../../lib/change-form.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { ChangeTermsSection, FormErrors, WorkGraphSection } from "./new-change-sections.tsx";

/** An idempotency key for this form: a retried submit finds the Change the first one created. */
function newRequestId(): string {
  if (typeof crypto.randomUUID === "function") return `web-${crypto.randomUUID()}`;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The form's state: the draft, its problems, the idempotency key, whether it lands when ready, and
 * the create request (on success the browser goes to the new Change's page).
 */
function useNewChangeForm(tenantId: string, projectId: string) {
  const trpc = useTRPC();
  const router = useRouter();
  const [draft, setDraft] = useState<ChangeDraft>(emptyDraft);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [requestId] = useState(newRequestId);
  const [landWhenReady, setLandWhenReady] = useState(false);
  const create = useMutation(
    trpc.change.create.mutationOptions({
      onSuccess: ({ changeId }) => router.push(`/projects/${projectId}/changes/${changeId}`),
      onError: (err) => {
        const issues = err.data?.zodError;
        setErrors(issues && issues.length > 0 ? fieldErrorsOf(issues, ["change"]) : { "": [err.message] });
      },
    }),
  );
  const set = <K extends keyof ChangeDraft>(key: K, value: ChangeDraft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const checked = validateDraft(draft);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setErrors({});
    create.mutate({ tenantId, projectId, clientRequestId: requestId, change: checked.input, landWhenReady });
  }

  return { draft, setDraft, errors, setErrors, landWhenReady, setLandWhenReady, create, set, submit };
}

/**
 * The "new Change" form: the Change's terms and its Work Graph. Checked in the browser with the
 * same core schemas the server uses; whatever the server still refuses is shown at its field.
 * On success the browser goes to the new Change's page.
 */
export function NewChangeForm({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const { draft, setDraft, errors, setErrors, landWhenReady, setLandWhenReady, create, set, submit } = useNewChangeForm(
    tenantId,
    projectId,
  );

  const errorCount = Object.values(errors).reduce((n, list) => n + list.length, 0);
  return (
    <form data-testid="new-change-form" onSubmit={submit} noValidate className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-xl font-semibold">New Change</h1>
        <button
          type="button"
          data-testid="load-example"
          onClick={() => {
            setDraft(exampleChange());
            setErrors({});
          }}
          className="rounded border border-slate-300 px-3 py-1 text-sm hover:bg-slate-100"
        >
          Load an example
        </button>
      </div>

      {errorCount > 0 && <FormErrors errors={errors} errorCount={errorCount} />}

      <ChangeTermsSection draft={draft} errors={errors} set={set} />

      <WorkGraphSection draft={draft} errors={errors} setDraft={setDraft} />

      <label className="flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          data-testid="land-when-ready-input"
          checked={landWhenReady}
          onChange={(e) => setLandWhenReady(e.target.checked)}
        />
        Land when ready: promote it without another click once it is verified (and approved, where policy asks)
      </label>

      <div className="flex items-center gap-3">
        <button
          type="submit"
          data-testid="submit-change"
          disabled={create.isPending || create.isSuccess}
          className="rounded bg-slate-900 px-4 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50"
        >
          {create.isPending || create.isSuccess ? "Creating…" : "Create Change"}
        </button>
        <a href={`/projects/${projectId}`} className="text-sm underline">
          Cancel
        </a>
      </div>
    </form>
  );
}
