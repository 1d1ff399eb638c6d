import type { ShellState } from "../server/shell.ts";

/** Product name, the tenant being worked in, and the signed-in user. */
export function AppHeader({ shell }: { shell: ShellState }) {
  return (
    <header data-testid="app-header" className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-5xl items-center justify-between gap-4 px-6 py-3">
        <div className="flex items-center gap-3">
          <span className="text-lg font-semibold tracking-tight">Rhumbatron</span>
          {shell.kind === "ready" && (
            <>
              <span className="text-slate-300">/</span>
              <span data-testid="tenant-name" className="font-medium text-slate-700">
                {shell.tenant.name}
              </span>
              <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-600">{shell.tenant.role}</span>
            </>
          )}
        </div>
        <div data-testid="current-user" className="text-right text-sm">
          {shell.kind === "ready" || shell.kind === "no-tenant" ? (
            <>
              <div className="font-medium">{shell.caller.name}</div>
              <div className="text-slate-500">{shell.caller.email}</div>
            </>
          ) : (
            <span className="text-slate-500">Not signed in</span>
          )}
        </div>
      </div>
    </header>
  );
}
