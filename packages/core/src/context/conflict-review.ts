import { z } from "zod";
import type { ComposableChangeSet } from "../verification/compatibility.ts";
import type { CheckVerdict, GateResult } from "../verification/gate.ts";
import { findingSupported } from "../verification/promotion.ts";
import { type ContextPacket, contextItemIds } from "./packet.ts";

/**
 * Conflict reviews (docs/protocol.md, Context Packets and model findings: a finding must cite items of
 * the review's Context Packet; one with a bad citation is unsupported and cannot change state). When a Candidate composes ChangeSets of
 * Tasks that did not build on each other and changed the same files, the verification workflow asks
 * a model to review those files: the base, each Task's version and the composed one, as packet items.
 * Each finding is recorded; a supported blocking finding is a gap of the gate, so the Candidate is
 * not promotable; an advisory one is shown; an unsupported one is shown as such and changes nothing.
 * Pure: the prompt, the strict reading of the answer, the judging of citations and the gaps.
 */
export const FINDING_SEVERITIES = ["blocking", "advisory"] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** The answer's one accepted shape; anything else (an extra field included) fails the review. */
export const conflictReviewAnswerSchema = z
  .object({
    findings: z
      .array(
        z
          .object({
            severity: z.enum(FINDING_SEVERITIES),
            message: z.string().trim().min(1).max(2000),
            citations: z.array(z.string().min(1).max(40)).max(20),
          })
          .strict(),
      )
      .max(20),
  })
  .strict();
export type ReviewFinding = z.infer<typeof conflictReviewAnswerSchema>["findings"][number];

/**
 * The files a conflict review looks at: each path two ChangeSets changed when neither builds on the
 * other (a Task that depends on another started from its result, so both changing a file is just
 * the next step, not a meeting). With the ChangeSets that changed it, in composition order. Empty:
 * no review.
 */
export function reviewOverlaps(changeSets: readonly ComposableChangeSet[]): { path: string; changeSets: string[] }[] {
  const builtOn = new Map(changeSets.map((cs) => [cs.id, new Set(cs.builtOn ?? [])]));
  const related = (a: string, b: string) => builtOn.get(a)?.has(b) || builtOn.get(b)?.has(a);
  const byPath = new Map<string, string[]>();
  for (const cs of changeSets) for (const f of cs.files) byPath.set(f.path, [...(byPath.get(f.path) ?? []), cs.id]);
  const out: { path: string; changeSets: string[] }[] = [];
  for (const [path, ids] of [...byPath].sort(([a], [b]) => a.localeCompare(b))) {
    const meet = ids.some((a, i) => ids.slice(i + 1).some((b) => a !== b && !related(a, b)));
    if (meet) out.push({ path, changeSets: [...new Set(ids)] });
  }
  return out;
}

/** `skipped`: no model was asked (none configured); `failed`: one was asked and gave no usable answer. */
export const REVIEW_STATUSES = ["completed", "failed", "skipped"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export type ReviewAnswer =
  | { status: "completed"; model: string; findings: ReviewFinding[] }
  | { status: "failed"; model: string; reason: string }
  | { status: "skipped"; reason: string };

export interface ConflictReviewQuestion {
  candidateId: string;
  changeTitle: string;
  /** The Tasks whose ChangeSets overlap, in composition order. */
  tasks: { key: string; title: string; changeSetId: string }[];
  packet: ContextPacket;
  /** Each item's text, by item ID. */
  contents: Record<string, string>;
}

/** The conflict-review port; adapters live in the worker. */
export interface ConflictReviewer {
  readonly name: string;
  /** Never throws: a timeout, an HTTP error or an unreadable answer comes back as `failed`. */
  review(q: ConflictReviewQuestion, signal?: AbortSignal): Promise<ReviewAnswer>;
}

const SYSTEM_PROMPT = [
  "You review one composition of a code change: Tasks that worked at the same time changed the same files,",
  "and their edits were merged line by line without a textual conflict. Look for what such a merge can break:",
  "both Tasks doing the same thing twice, one relying on what the other changed, contradicting edits.",
  "Every file version you are shown is an item with an ID such as ctx_1. Each finding must cite the item IDs",
  "it rests on. Use severity blocking only for a defect the composed version has; advisory for anything else.",
  'Reply with one JSON object and nothing else: {"findings":[{"severity":"blocking"|"advisory","message":"<what and why>","citations":["ctx_1"]}]}',
  'Reply {"findings":[]} when you find nothing.',
].join("\n");

export interface ReviewMessage {
  role: "system" | "user";
  content: string;
}

/** The chat messages of one review: the Tasks, then every item with its ID, what it is, and its text. */
export function conflictReviewPrompt(q: ConflictReviewQuestion): ReviewMessage[] {
  const user = [
    `Change: ${q.changeTitle}`,
    `Candidate: ${q.candidateId}`,
    "Tasks whose changes overlap:",
    ...q.tasks.map((t) => `- ${t.key}: ${t.title} (${t.changeSetId})`),
    `Context Packet ${q.packet.id}:`,
    ...q.packet.items.flatMap((it) => [
      `=== ${it.id} ${JSON.stringify(it.path)}: ${it.why} (blob ${it.blob}, ${it.size} bytes) ===`,
      q.contents[it.id] ?? "(content not available)",
    ]),
    ...(q.packet.omitted.length
      ? [`Not shown (over the budget): ${q.packet.omitted.map((o) => JSON.stringify(o.path)).join(", ")}`]
      : []),
  ].join("\n");
  return [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: user },
  ];
}

const FENCE = /^```(?:json)?\s*([\s\S]*?)\s*```$/i;
const show = (s: string) => s.slice(0, 120);

/**
 * Reads the model's answer strictly: one JSON object of the accepted shape (a code fence around it
 * is allowed). Nothing is repaired: a malformed answer is a failed review, with what was wrong.
 */
export function parseConflictReviewAnswer(text: string, model: string): ReviewAnswer {
  const trimmed = text.trim();
  if (trimmed === "") return { status: "failed", model, reason: "empty answer" };
  const body = FENCE.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { status: "failed", model, reason: `answer is not JSON: ${show(trimmed)}` };
  }
  const parsed = conflictReviewAnswerSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(answer)"}: ${i.message}`);
    return { status: "failed", model, reason: `answer does not have the findings shape: ${issues.join("; ")}` };
  }
  return { status: "completed", model, findings: parsed.data.findings };
}

export interface JudgedFinding extends ReviewFinding {
  /** Every citation names an item of the review's packet (and there is at least one). */
  supported: boolean;
}

export function judgeFindings(findings: readonly ReviewFinding[], packet: ContextPacket): JudgedFinding[] {
  const ids = contextItemIds(packet);
  return findings.map((f) => ({ ...f, supported: findingSupported(f.citations, ids) }));
}

/** One review per Candidate: its ID, its packet's and its findings' derive from the Candidate's. */
export const conflictReviewIds = (candidateId: string) => {
  const key = candidateId.replace(/^cand_/, "");
  return {
    review: `crev_${key}`,
    packet: `ctxp_crev_${key}`,
    finding: (n: number) => `crf_${key}_${n}`,
  };
};

/** The gate's check ID for conflict-review gaps (not a planned check: the review is not a Sandbox command). */
export const CONFLICT_REVIEW_CHECK = "conflict-review";

/** A recorded finding as the gate reads it. */
export interface RecordedFinding {
  id: string;
  severity: string;
  message: string;
  citations: string[];
  supported: boolean;
}

/** One gap per supported blocking finding, with its message and citations; anything else is no gap. */
export function reviewGaps(findings: readonly RecordedFinding[]): CheckVerdict[] {
  return findings
    .filter((f) => f.supported && f.severity === "blocking")
    .map((f) => ({
      checkId: CONFLICT_REVIEW_CHECK,
      satisfied: false,
      gap: "blocking_finding",
      evidenceId: f.id,
      detail: `${f.message} (cites ${f.citations.join(", ")})`,
      excerpt: [],
    }));
}

/** The gate with the review's gaps: a supported blocking finding makes any Candidate unpromotable. */
export function withReviewGaps(gate: GateResult, findings: readonly RecordedFinding[]): GateResult {
  const gaps = reviewGaps(findings);
  if (gaps.length === 0) return gate;
  return { ...gate, promotable: false, verdicts: [...gate.verdicts, ...gaps], gaps: [...gate.gaps, ...gaps] };
}
