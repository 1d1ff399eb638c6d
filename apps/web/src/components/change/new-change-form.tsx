"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { exampleChange } from "../../lib/change-example.ts";
import {
  type ChangeDraft,
  emptyDraft,
  emptyTask,
  type FieldErrors,
  fieldErrorsOf,
  freshTaskKey,
  RISK_TIERS,
  removeTask,
  renameTask,
  validateDraft,
} from "../../lib/change-form.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { Field, fieldId, hasErrors, inputClass, TextField } from "./form-fields.tsx";
import { TaskEditor } from "./task-editor.tsx";

/** An idempotency key for this form: a retried submit finds the Change the first one created. */
function newRequestId(): string {
  if (typeof crypto.randomUUID === "function") return `web-${crypto.randomUUID()}`;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The "new Change" form: the Change's terms and its Work Graph. Checked in the browser with the
 * same core schemas the server uses; whatever the server still refuses is shown at its field.
 * On success the browser goes to the new Change's page.
 */
export function NewChangeForm({ tenantId, projectId }: { tenantId: string; projectId: string }) {
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

      {errorCount > 0 && (
        <div
          data-testid="form-errors"
          role="alert"
          className="rounded border border-red-200 bg-red-50 p-3 text-sm text-red-900"
        >
          <p className="font-medium">
            {errors[""] ? errors[""].join(" ") : `Fix ${errorCount} problem${errorCount === 1 ? "" : "s"} below.`}
          </p>
          {errors[""] && errorCount > errors[""].length && <p>Fix the problems below as well.</p>}
        </div>
      )}

      <section className="space-y-3 rounded-lg border border-slate-200 bg-white p-4">
        <TextField
          label="Title"
          errors={errors}
          name="title"
          testId="change-title-input"
          value={draft.title}
          onChange={(v) => set("title", v)}
        />
        <TextField
          label="Description"
          errors={errors}
          name="description"
          testId="change-description-input"
          rows={3}
          value={draft.description}
          onChange={(v) => set("description", v)}
        />
        <div className="grid gap-3 sm:grid-cols-2">
          <Field label="Risk tier" errors={errors} name="riskTier">
            <select
              id={fieldId("riskTier")}
              data-testid="risk-tier-select"
              value={draft.riskTier}
              onChange={(e) => set("riskTier", e.target.value as ChangeDraft["riskTier"])}
              className={inputClass(hasErrors(errors, "riskTier"))}
            >
              {RISK_TIERS.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <TextField
            label="Goal: p95 latency below (ms)"
            hint="Optional; adds the performance check."
            errors={errors}
            name="goals"
            testId="p95-input"
            inputMode="numeric"
            value={draft.p95LatencyMs}
            onChange={(v) => set("p95LatencyMs", v)}
          />
        </div>
        <TextField
          label="Invariants"
          hint="One per line. A project's checks file can run a check when an invariant names a word."
          errors={errors}
          name="invariants"
          testId="invariants-input"
          rows={2}
          value={draft.invariants}
          onChange={(v) => set("invariants", v)}
        />
        <div className="grid gap-3 sm:grid-cols-3">
          {(["added", "removed", "changed"] as const).map((k) => (
            <TextField
              key={k}
              label={`Routes ${k}`}
              hint="One per line, like GET /api/items."
              errors={errors}
              name={`contractChanges.${k}`}
              testId={`contract-${k}-input`}
              rows={2}
              mono
              value={draft[k]}
              onChange={(v) => set(k, v)}
            />
          ))}
        </div>
      </section>

      <section className="space-y-3">
        <h2 className="font-semibold">Work Graph</h2>
        {errors.tasks && (
          <ul data-testid="field-error-tasks" role="alert" className="text-sm text-red-800">
            {errors.tasks.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        )}
        {draft.tasks.map((task, i) => (
          <TaskEditor
            // biome-ignore lint/suspicious/noArrayIndexKey: a Task's key is being edited; its position identifies it
            key={i}
            index={i}
            task={task}
            otherKeys={draft.tasks.filter((_, j) => j !== i).map((t) => t.key)}
            errors={errors}
            onChange={(t) => setDraft((d) => ({ ...d, tasks: d.tasks.map((x, j) => (j === i ? t : x)) }))}
            onRename={(key) => setDraft((d) => renameTask(d, i, key))}
            onRemove={draft.tasks.length > 1 ? () => setDraft((d) => removeTask(d, i)) : null}
          />
        ))}
        <button
          type="button"
          data-testid="add-task"
          onClick={() => setDraft((d) => ({ ...d, tasks: [...d.tasks, emptyTask(freshTaskKey(d))] }))}
          className="rounded border border-slate-300 px-3 py-1 text-sm hover:bg-slate-100"
        >
          Add a Task
        </button>
      </section>

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
