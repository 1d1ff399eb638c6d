"use client";

import { useState } from "react";
import { type FieldErrors, newStep, type StepDraft, type TaskDraft } from "../../lib/change-form.ts";
import { FieldError, inputClass, TextField } from "./form-fields.tsx";

const OPS: StepDraft["op"][] = ["write", "replace", "delete", "run"];

/** One Task of the Work Graph being written: key, title, dependencies, resource intents, edit plan. */
export function TaskEditor({
  index,
  task,
  otherKeys,
  errors,
  onChange,
  onRename,
  onRemove,
}: {
  index: number;
  task: TaskDraft;
  /** Keys of the other Tasks, which this one may depend on. */
  otherKeys: string[];
  errors: FieldErrors;
  onChange: (task: TaskDraft) => void;
  onRename: (key: string) => void;
  onRemove: (() => void) | null;
}) {
  const [op, setOp] = useState<StepDraft["op"]>("write");

  return (
    <fieldset data-testid={`task-editor-${index}`} className="space-y-3 rounded-lg border border-slate-200 p-3">
      <legend className="px-1 text-sm font-semibold">Task {index + 1}</legend>
      <KeyAndTitleFields index={index} task={task} errors={errors} onChange={onChange} onRename={onRename} />

      <DependsOnField index={index} task={task} otherKeys={otherKeys} errors={errors} onChange={onChange} />

      <IntentFields index={index} task={task} errors={errors} onChange={onChange} />

      <EditPlanFields index={index} task={task} errors={errors} op={op} setOp={setOp} onChange={onChange} />

      {onRemove && (
        <button
          type="button"
          data-testid={`remove-task-${index}`}
          onClick={onRemove}
          className="text-xs text-red-800 underline"
        >
          Remove this Task
        </button>
      )}
    </fieldset>
  );
}

/** The Task's key and its title. */
function KeyAndTitleFields({
  index,
  task,
  errors,
  onChange,
  onRename,
}: {
  index: number;
  task: TaskDraft;
  errors: FieldErrors;
  onChange: (task: TaskDraft) => void;
  onRename: (key: string) => void;
}) {
  const at = `tasks.${index}`;
  return (
    <div className="grid gap-3 sm:grid-cols-[12rem_1fr]">
      <TextField
        label="Key"
        errors={errors}
        name={`${at}.key`}
        testId={`task-key-input-${index}`}
        mono
        value={task.key}
        onChange={onRename}
      />
      <TextField
        label="Title"
        errors={errors}
        name={`${at}.title`}
        testId={`task-title-input-${index}`}
        value={task.title}
        onChange={(title) => onChange({ ...task, title })}
      />
    </div>
  );
}

/** The other Tasks this one depends on, one checkbox each. */
function DependsOnField({
  index,
  task,
  otherKeys,
  errors,
  onChange,
}: {
  index: number;
  task: TaskDraft;
  errors: FieldErrors;
  onChange: (task: TaskDraft) => void;
  /** Keys of the other Tasks, which this one may depend on. */
  otherKeys: string[];
}) {
  const at = `tasks.${index}`;
  return (
    <div className="text-sm">
      <span className="font-medium">Depends on</span>
      {otherKeys.length === 0 ? (
        <p className="text-xs text-slate-500">No other Tasks yet.</p>
      ) : (
        <div className="mt-1 flex flex-wrap gap-3">
          {otherKeys.map((k) => (
            <label key={k} className="flex items-center gap-1 font-mono text-xs">
              <input
                type="checkbox"
                data-testid={`task-depends-${index}-${k}`}
                checked={task.dependsOn.includes(k)}
                onChange={(e) =>
                  onChange({
                    ...task,
                    dependsOn: e.target.checked ? [...task.dependsOn, k] : task.dependsOn.filter((d) => d !== k),
                  })
                }
              />
              {k || "(no key)"}
            </label>
          ))}
        </div>
      )}
      <FieldError errors={errors} name={`${at}.dependsOn`} />
    </div>
  );
}

/** The resource intents: the paths and the folders the Task touches. */
function IntentFields({
  index,
  task,
  errors,
  onChange,
}: {
  index: number;
  task: TaskDraft;
  errors: FieldErrors;
  onChange: (task: TaskDraft) => void;
}) {
  const at = `tasks.${index}`;
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <TextField
        label="Paths it touches"
        hint="One repository path per line."
        errors={errors}
        name={`${at}.intents.paths`}
        testId={`task-paths-input-${index}`}
        rows={2}
        mono
        value={task.paths}
        onChange={(paths) => onChange({ ...task, paths })}
      />
      <TextField
        label="Folders it touches"
        hint="One prefix per line, like src/billing/."
        errors={errors}
        name={`${at}.intents.prefixes`}
        testId={`task-prefixes-input-${index}`}
        rows={2}
        mono
        value={task.prefixes}
        onChange={(prefixes) => onChange({ ...task, prefixes })}
      />
    </div>
  );
}

/** The scripted edit plan: one editor per step, and a step kind to pick and add. */
function EditPlanFields({
  index,
  task,
  errors,
  op,
  setOp,
  onChange,
}: {
  index: number;
  task: TaskDraft;
  errors: FieldErrors;
  onChange: (task: TaskDraft) => void;
  /** The kind of step the Add step button adds. */
  op: StepDraft["op"];
  setOp: (op: StepDraft["op"]) => void;
}) {
  const at = `tasks.${index}`;
  const setStep = (j: number, step: StepDraft) =>
    onChange({ ...task, editPlan: task.editPlan.map((s, i) => (i === j ? step : s)) });
  return (
    <div className="space-y-2 text-sm">
      <span className="font-medium">Scripted edit plan (optional)</span>
      <p className="text-xs text-slate-500">The default scripted Agent replays these steps in order.</p>
      {task.editPlan.map((step, j) => (
        <StepEditor
          // biome-ignore lint/suspicious/noArrayIndexKey: steps have no identity of their own; their position is it
          key={j}
          testId={`step-${index}-${j}`}
          step={step}
          errorsAt={`${at}.editPlan.${j}`}
          errors={errors}
          onChange={(s) => setStep(j, s)}
          onRemove={() => onChange({ ...task, editPlan: task.editPlan.filter((_, i) => i !== j) })}
        />
      ))}
      <FieldError errors={errors} name={`${at}.editPlan`} />
      <div className="flex items-center gap-2">
        <select
          data-testid={`add-step-op-${index}`}
          aria-label="Step kind"
          value={op}
          onChange={(e) => setOp(e.target.value as StepDraft["op"])}
          className="rounded border border-slate-300 px-1 py-0.5 text-xs"
        >
          {OPS.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
        <button
          type="button"
          data-testid={`add-step-${index}`}
          onClick={() => onChange({ ...task, editPlan: [...task.editPlan, newStep(op)] })}
          className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100"
        >
          Add step
        </button>
      </div>
    </div>
  );
}

function StepEditor({
  testId,
  step,
  errorsAt,
  errors,
  onChange,
  onRemove,
}: {
  testId: string;
  step: StepDraft;
  errorsAt: string;
  errors: FieldErrors;
  onChange: (step: StepDraft) => void;
  onRemove: () => void;
}) {
  const bad = (name: string) => Object.keys(errors).some((k) => k.startsWith(`${errorsAt}.${name}`));
  const text = (name: string, value: string, set: (v: string) => void, multiline = false) => {
    const props = {
      "data-testid": `${testId}-${name}`,
      "aria-label": name,
      value,
      className: `${inputClass(bad(name))} font-mono text-xs`,
    };
    return multiline ? (
      <textarea {...props} rows={3} onChange={(e) => set(e.target.value)} />
    ) : (
      <input {...props} onChange={(e) => set(e.target.value)} />
    );
  };
  return (
    <div data-testid={testId} data-op={step.op} className="space-y-1 rounded border border-slate-200 bg-slate-50 p-2">
      <div className="flex items-center justify-between">
        <span className="font-mono text-xs font-semibold">{step.op}</span>
        <button type="button" onClick={onRemove} className="text-xs text-red-800 underline">
          Remove
        </button>
      </div>
      {step.op === "run"
        ? text("argv", step.argv, (argv) => onChange({ ...step, argv }))
        : text("path", step.path, (path) => onChange({ ...step, path }))}
      {step.op === "write" && text("content", step.content, (content) => onChange({ ...step, content }), true)}
      {step.op === "replace" && (
        <>
          {text("find", step.find, (find) => onChange({ ...step, find }), true)}
          {text("replace", step.replace, (replace) => onChange({ ...step, replace }), true)}
        </>
      )}
      {step.op === "run" && (
        <p className="text-xs text-slate-500">The command and its arguments, separated by spaces (no shell).</p>
      )}
      <FieldError errors={errors} name={errorsAt} />
    </div>
  );
}
