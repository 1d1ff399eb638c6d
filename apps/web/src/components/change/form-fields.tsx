import type { HTMLAttributes, ReactNode } from "react";
import type { FieldErrors } from "../../lib/change-form.ts";

/** The messages for a field and everything under it (`tasks.0.intents.paths` covers `…paths.3`). */
export function errorsUnder(errors: FieldErrors, key: string): string[] {
  return Object.entries(errors).flatMap(([k, messages]) => {
    if (k === key) return messages;
    if (k.startsWith(`${key}.`)) return messages.map((m) => `${k.slice(key.length + 1)}: ${m}`);
    return [];
  });
}

/** Whether a field, or anything under it, has a problem. */
export const hasErrors = (errors: FieldErrors, name: string) =>
  Object.keys(errors).some((k) => k === name || k.startsWith(`${name}.`));

/** The DOM id of a field's control (`tasks.0.key` -> `field-tasks-0-key`). */
export const fieldId = (name: string) => `field-${name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;

/** A field's problems, under the field, announced to screen readers. */
export function FieldError({ errors, name }: { errors: FieldErrors; name: string }) {
  const messages = errorsUnder(errors, name);
  if (messages.length === 0) return null;
  return (
    <ul id={`${fieldId(name)}-error`} data-testid={`field-error-${name}`} role="alert" className="text-xs text-red-800">
      {messages.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}

export const inputClass = (invalid: boolean) =>
  `w-full rounded border px-2 py-1 text-sm ${invalid ? "border-red-400 bg-red-50" : "border-slate-300"}`;

/** A labelled control: the child control must carry `id={fieldId(name)}`. */
export function Field({
  label,
  hint,
  errors,
  name,
  children,
}: {
  label: string;
  hint?: string;
  errors: FieldErrors;
  name: string;
  children: ReactNode;
}) {
  return (
    <div className="flex flex-col gap-1 text-sm">
      <label htmlFor={fieldId(name)} className="font-medium">
        {label}
      </label>
      {children}
      {hint && <span className="text-xs text-slate-500">{hint}</span>}
      <FieldError errors={errors} name={name} />
    </div>
  );
}

/**
 * A labelled text control whose id, look and problems all follow from `name`: an input (which says
 * aria-invalid) or, given `rows`, a textarea.
 */
export function TextField({
  label,
  hint,
  errors,
  name,
  testId,
  value,
  onChange,
  rows,
  mono = false,
  inputMode,
}: {
  label: string;
  hint?: string;
  errors: FieldErrors;
  name: string;
  testId: string;
  value: string;
  onChange: (value: string) => void;
  /** A textarea of this many rows; a one-line input without. */
  rows?: number;
  /** Monospace, for keys, paths and routes. */
  mono?: boolean;
  inputMode?: HTMLAttributes<HTMLInputElement>["inputMode"];
}) {
  const invalid = hasErrors(errors, name);
  const control = {
    id: fieldId(name),
    "data-testid": testId,
    value,
    className: mono ? `${inputClass(invalid)} font-mono` : inputClass(invalid),
  };
  return (
    <Field label={label} hint={hint} errors={errors} name={name}>
      {rows === undefined ? (
        <input {...control} inputMode={inputMode} onChange={(e) => onChange(e.target.value)} aria-invalid={invalid} />
      ) : (
        <textarea {...control} rows={rows} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}
