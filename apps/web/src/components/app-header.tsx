import { hasAtLeast } from "@rhumbatron/api/roles";
import type { ShellState } from "../server/shell.ts";
import { InboxLink } from "./notifications/inbox-link.tsx";
import { SignOutButton } from "./sign-out-button.tsx";

/** Product name, the tenant being worked in, and the signed-in user with their settings and sign-out. */
export function AppHeader({ shell }: { shell: ShellState }) {
  const signedIn = shell.kind === "ready" || shell.kind === "no-tenant";
  return (
    <header data-testid="app-header" className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-5xl items-center justify-between gap-4 px-6 py-3">
        <div className="flex items-center gap-3">
          <a href="/" className="text-lg font-semibold tracking-tight">
            Rhumbatron
          </a>
          {shell.kind === "ready" && (
            <>
              <span className="text-slate-300">/</span>
              <span data-testid="tenant-name" className="font-medium text-slate-700">
                {shell.tenant.name}
              </span>
              <span data-testid="tenant-role" className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-600">
                {shell.tenant.role}
              </span>
            </>
          )}
        </div>
        <div className="flex items-center gap-4">
          {shell.kind === "ready" && (
            <nav className="flex items-center gap-3 text-sm text-slate-600">
              <a href="/" data-testid="nav-projects" className="hover:text-slate-900 hover:underline">
                Projects
              </a>
              <a href="/metrics" data-testid="nav-metrics" className="hover:text-slate-900 hover:underline">
                Metrics
              </a>
              <InboxLink tenantId={shell.tenant.tenantId} />
              {hasAtLeast(shell.tenant.role, "operator") && (
                <a href="/operations" data-testid="nav-operations" className="hover:text-slate-900 hover:underline">
                  Operations
                </a>
              )}
            </nav>
          )}
          {shell.kind === "ready" && hasAtLeast(shell.tenant.role, "admin") && (
            <a
              href="/settings/members"
              data-testid="nav-members"
              className="text-sm text-slate-600 hover:text-slate-900 hover:underline"
            >
              Members
            </a>
          )}
          {shell.kind === "ready" && (
            <a href="/settings/tokens" className="text-sm text-slate-600 hover:text-slate-900 hover:underline">
              API tokens
            </a>
          )}
          {signedIn && (
            <a
              href="/settings/account"
              data-testid="nav-account"
              className="text-sm text-slate-600 hover:text-slate-900 hover:underline"
            >
              Account
            </a>
          )}
          <div data-testid="current-user" className="text-right text-sm">
            {signedIn ? (
              <>
                <div className="font-medium">{shell.caller.name}</div>
                <div className="text-slate-500">{shell.caller.email}</div>
              </>
            ) : (
              <span className="text-slate-500">Not signed in</span>
            )}
          </div>
          {signedIn ? (
            <SignOutButton />
          ) : (
            shell.kind === "signed-out" && (
              <a href="/sign-in" className="text-sm font-medium text-slate-700 hover:underline">
                Sign in
              </a>
            )
          )}
        </div>
      </div>
    </header>
  );
}
