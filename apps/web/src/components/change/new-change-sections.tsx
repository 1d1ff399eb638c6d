import type { Dispatch, SetStateAction } from "react";
import {
  type ChangeDraft,
  emptyTask,
  type FieldErrors,
  freshTaskKey,
  RISK_TIERS,
  removeTask,
  renameTask,
} from "../../lib/change-form.ts";
import { Field, fieldId, hasErrors, inputClass, TextField } from "./form-fields.tsx";
import { TaskEditor } from "./task-editor.tsx";

/** Sets one field of the draft. */
type SetField = <K extends keyof ChangeDraft>(key: K, value: ChangeDraft[K]) => void;

/** The form's problems at the top: the server's own message, or how many to fix below. */
export function FormErrors({ errors, errorCount }: { errors: FieldErrors; errorCount: number }) {
  return (
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
  );
}

/** The Change's terms: title, description, risk tier, latency goal, invariants and contract changes. */
export function ChangeTermsSection({ draft, errors, set }: { draft: ChangeDraft; errors: FieldErrors; set: SetField }) {
  return (
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
      <RiskAndGoalFields draft={draft} errors={errors} set={set} />
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
      <RouteFields draft={draft} errors={errors} set={set} />
    </section>
  );
}

/** The risk tier and the optional p95 latency goal, side by side. */
function RiskAndGoalFields({ draft, errors, set }: { draft: ChangeDraft; errors: FieldErrors; set: SetField }) {
  return (
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
  );
}

/** The routes the Change adds, removes and changes, one field each. */
function RouteFields({ draft, errors, set }: { draft: ChangeDraft; errors: FieldErrors; set: SetField }) {
  return (
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
  );
}

/** The Work Graph being written: its problems, one editor per Task, and a button to add a Task. */
export function WorkGraphSection({
  draft,
  errors,
  setDraft,
}: {
  draft: ChangeDraft;
  errors: FieldErrors;
  setDraft: Dispatch<SetStateAction<ChangeDraft>>;
}) {
  return (
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
  );
}
