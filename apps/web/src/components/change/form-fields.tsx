import type { ReactNode } from "react";
import type { FieldErrors } from "../../lib/change-form.ts";

/** The messages for a field and everything under it (`tasks.0.intents.paths` covers `…paths.3`). */
export function errorsUnder(errors: FieldErrors, key: string): string[] {
  return Object.entries(errors).flatMap(([k, messages]) => {
    if (k === key) return messages;
    if (k.startsWith(`${key}.`)) return messages.map((m) => `${k.slice(key.length + 1)}: ${m}`);
    return [];
  });
}

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
