import { hasAtLeast } from "@rhumbatron/api/roles";
import type { ShellState } from "../server/shell.ts";
import { InboxLink } from "./notifications/inbox-link.tsx";
import { SignOutButton } from "./sign-out-button.tsx";

const LINK = "whitespace-nowrap hover:text-slate-900 hover:underline";

/**
 * Product name, the tenant being worked in, and the signed-in user with their settings and sign-out.
 * No item ever breaks inside itself ("API / tokens"): each keeps to one line, and when the row is too
 * narrow (a phone) the items wrap onto the next line between one another instead of leaving the page.
 * The header runs wider than the pages under it so that, on a laptop, it all fits on one line.
 */
export function AppHeader({ shell }: { shell: ShellState }) {
  const signedIn = shell.kind === "ready" || shell.kind === "no-tenant";
  return (
    <header data-testid="app-header" className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-7xl flex-wrap items-center justify-between gap-x-6 gap-y-2 px-4 py-3 sm:px-6">
        <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1">
          <a href="/" className="text-lg font-semibold tracking-tight whitespace-nowrap">
            Rhumbatron
          </a>
          {shell.kind === "ready" && (
            <>
              <span className="text-slate-300">/</span>
              <span data-testid="tenant-name" className="font-medium [overflow-wrap:anywhere] text-slate-700">
                {shell.tenant.name}
              </span>
              <span data-testid="tenant-role" className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-600">
                {shell.tenant.role}
              </span>
            </>
          )}
        </div>
        <div className="flex min-w-0 flex-wrap items-center gap-x-4 gap-y-2 text-sm text-slate-600">
          {shell.kind === "ready" && (
            <nav className="flex flex-wrap items-center gap-x-3 gap-y-1">
              <a href="/" data-testid="nav-projects" className={LINK}>
                Projects
              </a>
              <a href="/metrics" data-testid="nav-metrics" className={LINK}>
                Metrics
              </a>
              <InboxLink tenantId={shell.tenant.tenantId} />
              {hasAtLeast(shell.tenant.role, "operator") && (
                <a href="/operations" data-testid="nav-operations" className={LINK}>
                  Operations
                </a>
              )}
            </nav>
          )}
          {shell.kind === "ready" && hasAtLeast(shell.tenant.role, "admin") && (
            <a href="/settings/members" data-testid="nav-members" className={LINK}>
              Members
            </a>
          )}
          {shell.kind === "ready" && hasAtLeast(shell.tenant.role, "admin") && (
            <a href="/settings/secrets" data-testid="nav-secrets" className={LINK}>
              Secrets
            </a>
          )}
          {shell.kind === "ready" && (
            <a href="/settings/tokens" data-testid="nav-tokens" className={LINK}>
              API tokens
            </a>
          )}
          {signedIn && (
            <a href="/settings/account" data-testid="nav-account" className={LINK}>
              Account
            </a>
          )}
          <CurrentUser shell={shell} />
        </div>
      </div>
    </header>
  );
}

/** Who is signed in, and the way out, stay side by side when the row wraps. */
function CurrentUser({ shell }: { shell: ShellState }) {
  const signedIn = shell.kind === "ready" || shell.kind === "no-tenant";
  return (
    <div className="flex min-w-0 items-center gap-3">
      <div data-testid="current-user" className="min-w-0 text-sm sm:text-right">
        {signedIn ? (
          <>
            <div className="font-medium [overflow-wrap:anywhere] text-slate-900">{shell.caller.name}</div>
            <div className="[overflow-wrap:anywhere] text-slate-500">{shell.caller.email}</div>
          </>
        ) : (
          <span className="text-slate-500">Not signed in</span>
        )}
      </div>
      {signedIn ? (
        <SignOutButton />
      ) : (
        shell.kind === "signed-out" && (
          <a href="/sign-in" className="font-medium whitespace-nowrap text-slate-700 hover:underline">
            Sign in
          </a>
        )
      )}
    </div>
  );
}
