import { latestWorkerHeartbeat, type WorkerHealth } from "@rhumbatron/db";
import type { ReactNode } from "react";
import { getDb } from "../server/db.ts";
import type { ShellState } from "../server/shell.ts";
import { Panel } from "./query-state.tsx";

/** The Sandbox as the newest worker reported it; null when no worker has beaten or the database is down. */
export async function loadSandboxStatus(): Promise<WorkerHealth["sandbox"]> {
  try {
    return (await latestWorkerHeartbeat(getDb()))?.sandbox ?? null;
  } catch {
    return null;
  }
}

/**
 * Shown on every page to signed-in people while the worker's agent and check commands are not
 * isolated (no bubblewrap), so nobody mistakes a development host for a safe one.
 */
export async function SandboxNotice({ shell }: { shell: ShellState }) {
  if (shell.kind !== "ready" && shell.kind !== "no-tenant") return null;
  const sandbox = await loadSandboxStatus();
  if (!sandbox || sandbox.isolates) return null;
  return (
    <div role="alert" data-testid="sandbox-notice" className="border-b border-amber-300 bg-amber-50 text-amber-900">
      <p className="mx-auto max-w-5xl px-6 py-2 text-sm">
        <strong>Not isolated:</strong> {sandbox.note ?? "agent and check commands run as plain processes."}
      </p>
    </div>
  );
}

/** The operations page's account of the Sandbox: which one runs commands, and whether it isolates them. */
export async function SandboxPanel() {
  const sandbox = await loadSandboxStatus();
  let body: ReactNode;
  if (!sandbox) body = <p className="text-slate-500">No worker has reported its Sandbox yet.</p>;
  else if (sandbox.isolates)
    body = (
      <p>
        <span className="font-mono">{sandbox.kind}</span>: agent and check commands run isolated (no network, only their
        run folder writable, a scrubbed environment).
      </p>
    );
  else
    body = (
      <p className="text-amber-900">
        <span className="font-mono">{sandbox.kind}</span>: {sandbox.note}
      </p>
    );
  return (
    <Panel title="Sandbox" testId="operations-sandbox">
      <div data-isolates={sandbox ? String(sandbox.isolates) : "unknown"} className="text-sm">
        {body}
      </div>
    </Panel>
  );
}
