import type { CandidateInterdiff } from "./types.ts";

/**
 * What changed since the last approval of this Change (a recomposed Candidate): first the Change's
 * own diff (unchanged, or which files differ), then what the promotions in between changed under
 * it, with the files this Change also touches first and marked.
 */
export function InterdiffBox({ d }: { d: NonNullable<CandidateInterdiff> }) {
  const under = d.base.files.filter((f) => f.underChange);
  const other = d.base.files.filter((f) => !f.underChange);
  const own = d.treeIdentical
    ? { tone: "text-emerald-800", text: "The composed tree is byte-identical to the approved one." }
    : d.ownDiff.unchanged === null
      ? {
          tone: "text-amber-900",
          text: "The Change's own diff could not be compared (a patch is missing or truncated).",
        }
      : d.ownDiff.unchanged
        ? { tone: "text-emerald-800", text: "The Change's own diff is unchanged." }
        : {
            tone: "text-amber-900",
            text: `The Change's own diff changed in ${d.ownDiff.differingFiles.join(", ")}.`,
          };
  return (
    <section
      data-testid="approval-interdiff"
      data-own-diff={d.ownDiff.unchanged === null ? "unknown" : d.ownDiff.unchanged ? "unchanged" : "changed"}
      className="mb-3 rounded border border-sky-200 bg-sky-50 p-3 text-sm text-slate-800"
    >
      <h3 className="font-medium">
        Since {d.since.approvedBy} approved{" "}
        <a className="font-mono underline" href={`./${d.since.candidateId}`}>
          {d.since.candidateId}
        </a>{" "}
        on {d.since.approvedAt.toLocaleString()}
      </h3>
      <p data-testid="interdiff-own" className={`mt-1 ${own.tone}`}>
        {own.text}
      </p>
      {d.base.promotions.length === 0 ? (
        <p className="mt-1">The base did not move.</p>
      ) : (
        <div data-testid="interdiff-base" className="mt-1">
          <p>
            The base moved from generation {d.base.fromGeneration} to {d.base.toGeneration}:{" "}
            {d.base.promotions.map((p) => p.title ?? p.changeId ?? p.candidateId).join(", ")} changed{" "}
            {d.base.files.length} file{d.base.files.length === 1 ? "" : "s"}.
          </p>
          {under.length > 0 && (
            <p data-testid="interdiff-under" className="mt-1 text-amber-900">
              Also touched by this Change: {under.map((f) => f.path).join(", ")}
            </p>
          )}
          {other.length > 0 && <p className="mt-1 text-slate-600">Elsewhere: {other.map((f) => f.path).join(", ")}</p>}
        </div>
      )}
    </section>
  );
}
