import type { HealthReport } from "../../server/health.ts";
import { Panel } from "../query-state.tsx";

/** The operations page's copy of GET /api/health: the same report, the same problems. */
export function HealthPanel({ report }: { report: HealthReport }) {
  return (
    <Panel title="Health" testId="operations-health">
      <div data-status={report.status} className="space-y-1 text-sm">
        {report.status === "ok" ? (
          <p>Database and worker are up.</p>
        ) : (
          <ul className="list-disc pl-5 text-red-800">
            {report.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        )}
        <p className="text-slate-500">
          Worker:{" "}
          {report.worker ? (
            <>
              <span className="font-mono">{report.worker.workerId}</span>, last heartbeat{" "}
              <time dateTime={report.worker.lastHeartbeatAt}>{report.worker.lastHeartbeatAt}</time>
              {report.worker.stale ? " (stale)" : ""}
            </>
          ) : (
            "none yet"
          )}
          . Executor: {report.executor}. Migrations applied: {report.database.appliedMigrations}.
        </p>
      </div>
    </Panel>
  );
}
