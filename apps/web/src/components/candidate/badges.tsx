import { TONE_CLASSES, type Tone } from "../../lib/candidate-view.ts";

export function Badge({ tone, children, testId }: { tone: Tone; children: React.ReactNode; testId?: string }) {
  return (
    <span
      data-testid={testId}
      data-tone={tone}
      className={`inline-flex items-center rounded-full border px-2 py-0.5 text-xs font-medium ${TONE_CLASSES[tone]}`}
    >
      {children}
    </span>
  );
}

/** A hash shown short, with the whole value one hover (and one copy) away. */
export function Hash({ value, testId, full = false }: { value: string | null; testId?: string; full?: boolean }) {
  if (!value) return <span className="text-slate-400">—</span>;
  return (
    <code data-testid={testId} data-value={value} title={value} className="break-all font-mono text-xs">
      {full ? value : value.slice(0, 12)}
    </code>
  );
}
