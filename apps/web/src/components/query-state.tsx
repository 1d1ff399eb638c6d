import type { ReactNode } from "react";

/**
 * The three non-ready states every data panel shows. Each keeps the panel's test id and says which
 * state it is in `data-state`, so a reader (or a test) can tell loading from empty from failed.
 */
export function Loading({ testId, label }: { testId: string; label: string }) {
  return (
    <div data-testid={testId} data-state="loading" aria-busy="true" className="animate-pulse text-sm text-slate-500">
      {label}
    </div>
  );
}

export function LoadError({
  testId,
  what,
  message,
  onRetry,
}: {
  testId: string;
  what: string;
  message: string;
  onRetry?: () => void;
}) {
  return (
    <div
      data-testid={testId}
      data-state="error"
      role="alert"
      className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-900"
    >
      <p>
        Could not load {what}: {message}
      </p>
      {onRetry && (
        <button
          type="button"
          onClick={onRetry}
          className="mt-2 rounded border border-red-300 bg-white px-2 py-1 text-red-800 hover:bg-red-100"
        >
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ testId, children }: { testId: string; children: ReactNode }) {
  return (
    <div
      data-testid={testId}
      data-state="empty"
      className="rounded-lg border border-dashed border-slate-300 p-6 text-center text-sm text-slate-500"
    >
      {children}
    </div>
  );
}

/** A titled card around one part of a page. */
export function Panel({
  title,
  testId,
  actions,
  children,
}: {
  title: string;
  testId?: string;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section id={testId} data-testid={testId} className="rounded-lg border border-slate-200 bg-white p-4">
      <div className="mb-3 flex items-center justify-between gap-3">
        <h2 className="font-semibold">{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/**
 * What a panel shows until its query has data: Loading while pending, LoadError (with Try again)
 * once failed. Callers render it when `!query.isSuccess`, which also narrows `query.data` for them.
 */
export function NotReady({
  query,
  testId,
  what,
  label,
}: {
  query: { isPending: boolean; error: { message: string } | null; refetch: () => unknown };
  testId: string;
  /** Completes "Could not load …". */
  what: string;
  /** The loading line. */
  label: string;
}) {
  if (query.isPending) return <Loading testId={testId} label={label} />;
  return (
    <LoadError testId={testId} what={what} message={query.error?.message ?? ""} onRetry={() => void query.refetch()} />
  );
}
