import type { HealthReport } from "../../server/health.ts";
import { Panel } from "../query-state.tsx";

/**
 * The coding-agent programs the worker reports in its heartbeat (what a `program` Agent can be:
 * docs/coding-agents.md, "Claude Code, Codex, Gemini CLI and OpenCode"), with the package and version each runs.
 */
export function AgentProgramsPanel({ worker }: { worker: HealthReport["worker"] }) {
  const programs = worker?.agentPrograms ?? [];
  return (
    <Panel title="Agent programs" testId="operations-agent-programs">
      {!worker ? (
        <p data-testid="agent-programs" data-state="no-worker" className="text-sm text-slate-500">
          No worker has reported yet: start it (npm start starts it with the web app) to see its programs.
        </p>
      ) : programs.length === 0 ? (
        <p data-testid="agent-programs" data-state="empty" className="text-sm text-slate-600">
          None installed on the worker: <code className="font-mono">npm run setup -- --agent-programs</code> installs
          Claude Code and Codex; restart the worker after.
        </p>
      ) : (
        <ul data-testid="agent-programs" data-state="ready" className="divide-y divide-slate-100 text-sm">
          {programs.map((p) => (
            <li
              key={p.name}
              data-testid={`agent-program-${p.name}`}
              className="flex flex-wrap items-baseline gap-x-3 gap-y-0.5 py-1"
            >
              <span className="font-mono font-medium">{p.name}</span>
              <span className="font-mono text-xs text-slate-600 [overflow-wrap:anywhere]">
                {p.package}@{p.version}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}
