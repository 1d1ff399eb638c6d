import { findingStyle, reviewStatusBadge, TONE_CLASSES } from "../../lib/candidate-view.ts";
import { Empty, Panel } from "../query-state.tsx";
import { Badge, Hash } from "./badges.tsx";
import type { CandidateDetail } from "./types.ts";

type Review = NonNullable<CandidateDetail["conflictReview"]>;

/**
 * The conflict review (docs/verification.md, Conflict reviews): when two Tasks changed one file, a
 * model reviewed
 * those files over a Context Packet. Every finding is shown with the items it cites; a supported
 * blocking one is also a gap of the gate; an unsupported one is marked so and changes nothing. A
 * skipped or failed review says why.
 */
export function ConflictReviewPanel({ candidate }: { candidate: CandidateDetail }) {
  const review = candidate.conflictReview;
  const badge = review ? reviewStatusBadge(review.status) : null;
  return (
    <Panel
      title="Conflict review"
      testId="candidate-conflict-review"
      actions={
        badge && (
          <Badge tone={badge.tone} testId="conflict-review-status">
            <span data-status={review?.status}>{badge.text}</span>
          </Badge>
        )
      }
    >
      {!review ? (
        <Empty testId="conflict-review-none">
          No review: no two Tasks of this Candidate changed the same file (or it is not composed yet).
        </Empty>
      ) : (
        <ReviewBody review={review} />
      )}
    </Panel>
  );
}

function ReviewBody({ review }: { review: Review }) {
  return (
    <div className="space-y-3 text-sm">
      {review.reason && (
        <p data-testid="conflict-review-reason" className="text-slate-600">
          {review.status === "skipped" ? "Skipped" : "Failed"}: {review.reason}. This blocks nothing.
        </p>
      )}
      {review.status === "completed" && review.findings.length === 0 && (
        <p data-testid="conflict-review-clean" className="text-slate-600">
          {review.model} found nothing in the overlapping files.
        </p>
      )}
      {review.findings.length > 0 && (
        <ul className="space-y-2">
          {review.findings.map((f) => {
            const style = findingStyle(f);
            return (
              <li
                key={f.id}
                data-testid={`finding-${f.id}`}
                data-severity={f.severity}
                data-supported={String(f.supported)}
                className={`rounded border p-2 ${TONE_CLASSES[style.tone]}`}
              >
                <p>
                  <strong>{style.label}</strong>: {f.message}
                </p>
                <p className="text-xs opacity-80">{style.meaning}</p>
                <p className="mt-1 text-xs">
                  Cites:{" "}
                  {f.citations.length === 0
                    ? "nothing"
                    : f.citations.map((c, i) => (
                        <span key={c.id}>
                          {i > 0 && ", "}
                          <code className="font-mono">{c.id}</code>{" "}
                          {c.found ? (
                            <span>
                              ({c.path}, {c.why})
                            </span>
                          ) : (
                            <span className="font-medium">(no such item)</span>
                          )}
                        </span>
                      ))}
                </p>
              </li>
            );
          })}
        </ul>
      )}
      {review.packet && <PacketItems packet={review.packet} />}
    </div>
  );
}

/** What the model was shown: each Context Packet item with its ID, path, version and blob. */
function PacketItems({ packet }: { packet: NonNullable<Review["packet"]> }) {
  return (
    <details data-testid="conflict-review-packet">
      <summary className="cursor-pointer text-slate-600">
        Context Packet <code className="font-mono text-xs">{packet.id}</code>: {packet.items.length} items
        {packet.omitted.length ? `, ${packet.omitted.length} files over its budget` : ""}
      </summary>
      <ul className="mt-2 space-y-1">
        {packet.items.map((i) => (
          <li key={i.id} className="flex flex-wrap gap-x-2">
            <code className="font-mono text-xs">{i.id}</code>
            <span className="font-mono text-xs">{i.path}</span>
            <span className="text-slate-500">{i.why}</span>
            <Hash value={i.blob} />
          </li>
        ))}
        {packet.omitted.map((o) => (
          <li key={o.path} className="text-slate-500">
            not shown: <span className="font-mono text-xs">{o.path}</span> ({o.why})
          </li>
        ))}
      </ul>
    </details>
  );
}
