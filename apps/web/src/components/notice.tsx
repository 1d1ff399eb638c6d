import type { ReactNode } from "react";

/** A full-width message in place of page content (signed out, no tenant, database down). */
export function Notice({
  title,
  tone = "info",
  children,
}: {
  title: string;
  tone?: "info" | "error";
  children: ReactNode;
}) {
  const colors =
    tone === "error" ? "border-red-200 bg-red-50 text-red-900" : "border-slate-200 bg-white text-slate-700";
  return (
    <div role={tone === "error" ? "alert" : "status"} className={`rounded-lg border p-6 ${colors}`}>
      <h2 className="mb-1 font-semibold">{title}</h2>
      <div className="text-sm">{children}</div>
    </div>
  );
}

/** Why an action failed, said where the action is; `className` places it (a margin, say). */
export function ActionError({
  testId,
  className,
  children,
}: {
  testId?: string;
  className: string;
  children: ReactNode;
}) {
  return (
    <p role="alert" data-testid={testId} className={`${className} text-sm text-red-700`}>
      {children}
    </p>
  );
}
