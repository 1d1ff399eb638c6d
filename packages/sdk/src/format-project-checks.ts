import { describeCheckRules } from "@rhumbatron/core";
import type { ProjectChecks } from "./client.ts";
import { table } from "./format.ts";

/** `projects checks`: where the project's checks come from at its head, the checks, and the latest setup runs. */
export function formatProjectChecks(r: ProjectChecks): string {
  const head = r.commit ? `generation ${r.generation} (${r.commit})` : "no canonical generation";
  const out: string[] = [];
  const s = r.source;
  if (s.kind === "unreadable") out.push(`checks at ${head}: unknown, ${s.reason}`);
  if (s.kind === "none") out.push(`checks at ${head}: none; ${s.hint}`);
  if (s.kind === "invalid") {
    out.push(
      `checks at ${head}: ${s.path} (blob ${s.blob}) does not parse; no Candidate can be verified until it does:`,
    );
    for (const p of s.problems)
      out.push(`  ${s.path}${p.line ? `:${p.line}` : ""}: ${p.field ? `${p.field}: ` : ""}${p.message}`);
  }
  if (s.kind === "file" || s.kind === "detected") {
    out.push(
      s.kind === "file"
        ? `checks at ${head}: from ${s.path} (blob ${s.blob})`
        : `checks at ${head}: detected (no .rhumbatron/checks.yml), from:\n${s.reasons.map((x) => `  ${x}`).join("\n")}`,
    );
    const f = s.file;
    out.push(`requires    ${f.requires?.join(", ") || "-"}`, `registries  ${f.registries?.join(", ") || "none"}`);
    out.push("", "setup:");
    out.push(
      f.setup?.length
        ? table([
            ["ID", "RUN", "CACHE", "KEY"],
            ...f.setup.map((x) => [x.id, x.run.join(" "), x.cache?.join(",") ?? "-", x.key?.join(",") ?? "-"]),
          ])
        : "  none",
    );
    out.push("", "checks:");
    out.push(
      table([
        ["ID", "RUN", "WHEN", "REPORT", "ABOUT"],
        ...f.checks.map((c) => [
          c.id,
          [...(c.run ?? []), ...(c.procedure ? [`(${c.procedure})`] : [])].join(" "),
          describeCheckRules(c.when),
          c.report
            ? `${c.report.format}${c.report.path ? ` ${c.report.path}` : ""}`
            : c.metric
              ? `metric ${c.metric.name}`
              : c.procedure
                ? `${c.procedure} procedure`
                : "exit 0",
          c.about ?? "-",
        ]),
      ]),
    );
    if (s.kind === "detected")
      out.push("", "# Commit this file as .rhumbatron/checks.yml to make them the project's checks:", s.proposal);
  }
  out.push("", "recent setup runs:");
  out.push(
    r.setupRuns.length
      ? table([
          ["CANDIDATE", "STEP", "WHEN", "STATUS", "CACHE", "KEY", "MS", "LOG"],
          ...r.setupRuns.map((x) => [
            x.candidateId,
            x.stepId,
            new Date(x.completedAt).toISOString(),
            x.status,
            x.cacheHit === null ? "-" : x.cacheHit ? "hit" : "miss",
            x.cacheKey ?? "-",
            String(x.durationMs),
            x.logKey ?? "-",
          ]),
        ])
      : "  none yet",
  );
  return out.join("\n");
}
