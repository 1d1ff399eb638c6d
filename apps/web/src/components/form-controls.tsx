import type { InputHTMLAttributes, ReactNode, SelectHTMLAttributes } from "react";

/**
 * The small set of form controls the settings and project forms share, so a field, a choice and a
 * submit button look and behave alike everywhere. Each forwards the attributes it does not set.
 */

const classes = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(" ");

/** A labelled field: the label wraps the control, so `getByLabel(label)` finds it. */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child each caller passes in
    <label className="text-sm">
      <span className="mb-1 block font-medium">{label}</span>
      {children}
    </label>
  );
}

/** A text input; `className` adds to the shared look (a width, say). */
export function TextInput({ className, ...props }: InputHTMLAttributes<HTMLInputElement>) {
  return <input {...props} className={classes(className, "rounded border border-slate-300 px-3 py-1.5 text-sm")} />;
}

/** A select of plain string options, each shown as itself. `compact` fits it into a table row. */
export function OptionSelect<T extends string>({
  options,
  value,
  onChange,
  compact = false,
  ...props
}: Omit<SelectHTMLAttributes<HTMLSelectElement>, "value" | "onChange"> & {
  options: readonly T[];
  value: T;
  onChange: (value: T) => void;
  compact?: boolean;
}) {
  return (
    <select
      {...props}
      value={value}
      onChange={(e) => onChange(e.target.value as T)}
      className={`rounded border border-slate-300 bg-white px-2 ${compact ? "py-1" : "py-1.5"} text-sm disabled:opacity-60`}
    >
      {options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

/** The form's primary button, disabled and relabelled while its request is in flight. */
export function SubmitButton({
  pending,
  pendingLabel,
  children,
  testId,
  compact = false,
  className,
}: {
  pending: boolean;
  pendingLabel: string;
  children: ReactNode;
  testId?: string;
  /** py-1 instead of py-1.5, beside compact inputs. */
  compact?: boolean;
  /** Added to the shared look (a margin, say). */
  className?: string;
}) {
  return (
    <button
      type="submit"
      data-testid={testId}
      disabled={pending}
      className={classes(
        className,
        `rounded bg-slate-900 px-3 ${compact ? "py-1" : "py-1.5"} text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60`,
      )}
    >
      {pending ? pendingLabel : children}
    </button>
  );
}
