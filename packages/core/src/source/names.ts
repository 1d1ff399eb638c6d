import type { Environment } from "../config.ts";
import { DomainError } from "../errors.ts";

/**
 * Repository names (docs/protocol.md, Repository names). They derive from row IDs only: the canonical
 * repository is the Project ID, a Task workspace fork is `ws-<run>` for run `run_<run>`, a Candidate
 * fork is `cand-<id>` for Candidate `cand_<id>`. Nothing else builds a repository name.
 */
const UUIDISH = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const PROJECT = new RegExp(`^proj_${UUIDISH}$`);
const RUN = new RegExp(`^run_(${UUIDISH})$`);
const CANDIDATE = /^cand_([0-9a-f]{8,64})$/;

export function repoNamespace(env: Environment): string {
  return `rhumbatron-projects-${env}`;
}

export function canonicalRepo(projectId: string): string {
  if (!PROJECT.test(projectId)) throw new DomainError("INVALID_INPUT", `not a Project ID: ${projectId}`);
  return projectId;
}

export function workspaceFork(runId: string): string {
  const m = RUN.exec(runId);
  if (!m) throw new DomainError("INVALID_INPUT", `not a run ID: ${runId}`);
  return `ws-${m[1]}`;
}

export function candidateFork(candidateId: string): string {
  const m = CANDIDATE.exec(candidateId);
  if (!m) throw new DomainError("INVALID_INPUT", `not a Candidate ID: ${candidateId}`);
  return `cand-${m[1]}`;
}

/** Whether a string is a repository name this system could have built. */
export function isRepoName(name: string): boolean {
  return PROJECT.test(name) || new RegExp(`^ws-${UUIDISH}$`).test(name) || /^cand-[0-9a-f]{8,64}$/.test(name);
}

export type RepoMode = "read" | "write";

/** Blob-store keys under source/<project>/ (nothing there expires; archive cleanup removes it). */
export const sourceKeys = {
  index: (projectId: string, tree: string) => `source/${projectId}/${tree}/index.json`,
  code: (projectId: string, tree: string) => `source/${projectId}/${tree}/code.json`,
  blob: (projectId: string, blob: string) => `source/${projectId}/blobs/${blob}`,
  changesetPatch: (projectId: string, changeSetId: string) =>
    `source/${projectId}/patches/changesets/${changeSetId}.patch`,
  /** A program Agent's transcript steps (JSON), apps/worker/src/agents/program-agent.ts. */
  agentTranscript: (projectId: string, runId: string) => `agents/${projectId}/transcripts/${runId}.json`,
  candidatePatch: (projectId: string, candidateId: string) =>
    `source/${projectId}/patches/candidates/${candidateId}.patch`,
  /** What a Candidate's composition conflicted on, each side of each file (apps/worker/src/verification/conflict-record.ts). */
  candidateConflict: (projectId: string, candidateId: string) => `source/${projectId}/conflicts/${candidateId}.json`,
  /** The checks file proposed for a commit without one (the detected checks, verification/detect-checks.ts). */
  proposedChecks: (projectId: string, commit: string) => `source/${projectId}/checks/${commit}.yml`,
};

/**
 * Cuts a patch at `maxBytes` on a line boundary (docs/protocol.md, ChangeSets: 512 KB). Returns the
 * kept text and whether it was cut; the caller records the full size.
 */
export function truncatePatch(
  patch: string,
  maxBytes: number,
): { text: string; truncated: boolean; fullBytes: number } {
  const bytes = new TextEncoder().encode(patch);
  if (bytes.length <= maxBytes) return { text: patch, truncated: false, fullBytes: bytes.length };
  let end = maxBytes;
  // Back up to just after the last newline inside the limit.
  while (end > 0 && bytes[end - 1] !== 0x0a) end--;
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), truncated: true, fullBytes: bytes.length };
}
