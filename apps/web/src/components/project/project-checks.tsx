"use client";

import { type ChecksFile, type ChecksFileProblem, describeCheckRules } from "@rhumbatron/core";
import type { ProjectChecks as ProjectChecksAnswer, SetupRun } from "@rhumbatron/db";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady } from "../query-state.tsx";

const blobHref = (key: string) => `/api/blobs/${key.split("/").map(encodeURIComponent).join("/")}`;

/**
 * The project's checks at its canonical head (projects.checks): from its checks file, detected from
 * the repository (with the file to commit), the file's problems, or nothing; and the latest setup
 * runs with their cache hits and logs. What the next Candidate is judged by (docs/checks-file.md).
 */
export function ProjectChecks({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.projects.checks.queryOptions({ tenantId, projectId }));
  if (!q.isSuccess)
    return <NotReady query={q} testId="project-checks" what="the project's checks" label="Loading the checks…" />;
  const r: ProjectChecksAnswer = q.data;
  const s = r.source;
  return (
    <div data-testid="project-checks" data-source={s.kind} className="space-y-4 text-sm">
      <p data-testid="checks-source" className="text-slate-700">
        {s.kind === "file" && (
          <>
            From <code>{s.path}</code> at S{r.generation} (blob <code title={s.blob}>{s.blob.slice(0, 12)}</code>).
          </>
        )}
        {s.kind === "detected" && (
          <>
            Detected at S{r.generation}: the repository has no <code>.rhumbatron/checks.yml</code>; these checks come
            from {s.reasons.join("; ")}.
          </>
        )}
        {s.kind === "invalid" && (
          <>
            <code>{s.path}</code> at S{r.generation} does not parse: no Candidate can be verified until it does.
          </>
        )}
        {s.kind === "none" && (
          <>No checks: nothing in the repository to detect them from. Add .rhumbatron/checks.yml.</>
        )}
        {s.kind === "unreadable" && <>Unknown here: {s.reason}.</>}
      </p>
      {s.kind === "invalid" && <Problems problems={s.problems} />}
      {(s.kind === "file" || s.kind === "detected") && <FileSummary file={s.file} />}
      {s.kind === "detected" && (
        <details data-testid="proposed-checks-file">
          <summary className="cursor-pointer underline">Show the proposed checks file</summary>
          <p className="mt-2 text-slate-600">Commit it as .rhumbatron/checks.yml to make these the project's checks.</p>
          <pre className="mt-2 overflow-x-auto rounded bg-slate-50 p-3 text-xs">{s.proposal}</pre>
        </details>
      )}
      <SetupRuns projectId={projectId} runs={r.setupRuns} />
    </div>
  );
}

function Problems({ problems }: { problems: ChecksFileProblem[] }) {
  return (
    <ul
      data-testid="checks-problems"
      role="alert"
      className="space-y-1 rounded border border-red-200 bg-red-50 p-3 text-red-900"
    >
      {problems.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parser's problems have no identity beyond their order
        <li key={i}>
          {p.line ? `line ${p.line}: ` : ""}
          {p.field ? <code>{p.field}</code> : null}
          {p.field ? ": " : ""}
          {p.message}
        </li>
      ))}
    </ul>
  );
}

function FileSummary({ file }: { file: ChecksFile }) {
  return (
    <>
      <dl className="grid grid-cols-[8rem_minmax(0,1fr)] gap-x-3 gap-y-1 break-words">
        <dt className="text-slate-500">Requires</dt>
        <dd data-testid="checks-requires">{file.requires?.join(", ") || "nothing beyond the Sandbox's tools"}</dd>
        <dt className="text-slate-500">Registries</dt>
        <dd data-testid="checks-registries">{file.registries?.join(", ") || "none: setup has no network"}</dd>
        <dt className="text-slate-500">Setup</dt>
        <dd data-testid="checks-setup">
          {file.setup?.length
            ? file.setup.map((x) => (
                <div key={x.id}>
                  <code>{x.id}</code>: <code>{x.run.join(" ")}</code>
                  {x.cache ? ` (caches ${x.cache.join(", ")}${x.key ? `, keyed by ${x.key.join(", ")}` : ""})` : ""}
                </div>
              ))
            : "none"}
        </dd>
      </dl>
      {/* A narrow screen scrolls the table, never the page. */}
      <div className="max-w-full overflow-x-auto">
        <table data-testid="checks-table" className="w-full text-left">
          <thead className="text-slate-500">
            <tr>
              <th className="py-1 pr-3 font-normal">Check</th>
              <th className="py-1 pr-3 font-normal">Runs</th>
              <th className="py-1 pr-3 font-normal">When</th>
              <th className="py-1 pr-3 font-normal">Report</th>
            </tr>
          </thead>
          <tbody>
            {file.checks.map((c) => (
              <tr key={c.id} data-testid={`declared-check-${c.id}`} className="border-t border-slate-100 align-top">
                <td className="py-1 pr-3">
                  <code>{c.id}</code>
                  {c.about && <div className="text-slate-500">{c.about}</div>}
                </td>
                <td className="py-1 pr-3 break-all">
                  <code>{c.run?.join(" ")}</code>
                  {c.procedure ? ` (${c.procedure})` : ""}
                </td>
                <td className="py-1 pr-3">{describeCheckRules(c.when)}</td>
                <td className="py-1 pr-3">
                  {c.report
                    ? `${c.report.format}${c.report.path ? ` ${c.report.path}` : ""}`
                    : c.metric
                      ? `metric ${c.metric.name}`
                      : c.procedure
                        ? `the ${c.procedure} procedure`
                        : "exit 0"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function SetupRuns({ projectId, runs }: { projectId: string; runs: SetupRun[] }) {
  return (
    <div data-testid="setup-runs">
      <h3 className="font-medium">Recent setup runs</h3>
      {runs.length === 0 ? (
        <p className="text-slate-500">None yet: setup runs when a Candidate is verified.</p>
      ) : (
        <ul className="space-y-1">
          {runs.map((x) => (
            <li key={`${x.candidateId}-${x.stepId}`} data-testid="setup-run">
              <a className="underline" href={`/projects/${projectId}/candidates/${x.candidateId}`}>
                {x.candidateId}
              </a>{" "}
              <code>{x.stepId}</code> {x.status},{" "}
              {x.cacheHit === null ? "no cache" : x.cacheHit ? "cache hit" : "cache miss"}
              {x.cacheKey ? ` (key ${x.cacheKey})` : ""}, {(x.durationMs / 1000).toFixed(1)} s,{" "}
              {new Date(x.completedAt).toISOString()}
              {x.logKey ? (
                <>
                  {" "}
                  <a className="underline" href={blobHref(x.logKey)}>
                    log
                  </a>
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
