import { hasAtLeast } from "@rhumbatron/api/roles";
import type { Role } from "@rhumbatron/db";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import type { ShellState } from "../server/shell.ts";
import { Notice } from "./notice.tsx";

/**
 * What a page shows instead of its content when the shell is not ready, or when the caller's role
 * in the tenant is below what the page needs (the procedures refuse them too; this says so up front).
 * Null when the page may render. A caller whose session expired is sent to sign-in (and back to `path`).
 */
export function shellNotice(shell: ShellState, minimum: Role = "viewer", path?: string): ReactNode | null {
  if (shell.kind === "ready") {
    if (hasAtLeast(shell.tenant.role, minimum)) return null;
    return (
      <Notice title="Not allowed" tone="error">
        This page needs the {minimum} role or above in {shell.tenant.name}; you are {shell.tenant.role}.
      </Notice>
    );
  }
  switch (shell.kind) {
    case "unavailable":
      return (
        <Notice title="Database unavailable" tone="error">
          The server cannot reach its database. See{" "}
          <a className="underline" href="/api/health">
            /api/health
          </a>
          .
        </Notice>
      );
    case "signed-out":
      // proxy.ts sends requests without a session cookie to sign-in first; this catches an expired session.
      return redirect(path ? `/sign-in?next=${encodeURIComponent(path)}` : "/sign-in");
    case "no-tenant":
      return <Notice title="No tenant yet">You are not a member of any tenant yet.</Notice>;
    default:
      return <Notice title="Not available">This page cannot be shown right now.</Notice>;
  }
}
