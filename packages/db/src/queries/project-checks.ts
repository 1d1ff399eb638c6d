import {
  CHECKS_FILE,
  type ChecksFile,
  type ChecksFileProblem,
  DomainError,
  detectChecks,
  parseChecksFile,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * What a project's checks are at its canonical head (docs/checks-file.md, "A project's checks, on its page"):
 * its checks file, the checks detected from its repository when it has none, the file's problems
 * when it does not parse, or nothing at all; and its latest setup runs. The worker reads the same
 * file from each Candidate's base commit (apps/worker/src/verification/project-checks.ts), so this
 * is what the next Candidate will be judged by.
 */

/** Reads the canonical repository of a project at one commit; null when this host cannot read it. */
export interface CanonicalReader {
  /** Every file at the commit: its path and blob id. */
  files(projectId: string, commit: string): Promise<{ path: string; blob: string }[] | null>;
  /** A file's text at the commit, or null when absent. */
  read(projectId: string, commit: string, path: string): Promise<string | null>;
}

export type ProjectChecksSource =
  | { kind: "file"; path: string; blob: string; file: ChecksFile }
  | { kind: "detected"; proposal: string; reasons: string[]; file: ChecksFile }
  | { kind: "invalid"; path: string; blob: string; problems: ChecksFileProblem[] }
  | { kind: "none"; hint: string }
  /** The head's tree is not readable from this server (split hosting) or the project has no head yet. */
  | { kind: "unreadable"; reason: string };

export interface SetupRun {
  candidateId: string;
  /** The setup step (`setup-<id>`). */
  stepId: string;
  completedAt: Date;
  status: string;
  /** true: restored from the setup cache; false: the command ran; null: the step keeps no cache. */
  cacheHit: boolean | null;
  /** The cache key's first 12 characters, as the Evidence's detail names it; null when it names none. */
  cacheKey: string | null;
  durationMs: number;
  /** The setup log's blob key (none when restored from the cache: nothing ran). */
  logKey: string | null;
  detail: string;
}

export interface ProjectChecks {
  generation: number | null;
  commit: string | null;
  source: ProjectChecksSource;
  setupRuns: SetupRun[];
}

const KEY_IN_DETAIL = /\(key ([0-9a-f]{6,64})\)/;

export async function readProjectChecks(
  db: Db,
  reader: CanonicalReader,
  q: { tenantId: string; projectId: string; setupRuns?: number },
): Promise<ProjectChecks> {
  const project = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { id: true, canonicalGeneration: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  const head =
    project.canonicalGeneration === null
      ? null
      : await db.canonicalGeneration.findUnique({
          where: { projectId_generation: { projectId: project.id, generation: project.canonicalGeneration } },
          select: { generation: true, commit: true },
        });
  const source = head
    ? await sourceAt(reader, project.id, head.commit)
    : ({ kind: "unreadable", reason: "the project has no canonical generation yet" } as const);
  return {
    generation: head?.generation ?? null,
    commit: head?.commit ?? null,
    source,
    setupRuns: await setupRuns(db, project.id, q.setupRuns ?? 5),
  };
}

async function sourceAt(reader: CanonicalReader, projectId: string, commit: string): Promise<ProjectChecksSource> {
  const files = await reader.files(projectId, commit);
  if (!files)
    return { kind: "unreadable", reason: `the repository at ${commit.slice(0, 12)} is not readable from this server` };
  const declared = files.find((f) => f.path === CHECKS_FILE);
  if (declared) {
    const text = (await reader.read(projectId, commit, CHECKS_FILE)) ?? "";
    const reading = parseChecksFile(text);
    return reading.ok
      ? { kind: "file", path: CHECKS_FILE, blob: declared.blob, file: reading.file }
      : { kind: "invalid", path: CHECKS_FILE, blob: declared.blob, problems: reading.problems };
  }
  const detected = await detectChecks({
    paths: files.map((f) => f.path),
    read: (path) => reader.read(projectId, commit, path),
  });
  if (!detected) return { kind: "none", hint: `nothing to detect checks from: add ${CHECKS_FILE}` };
  return { kind: "detected", proposal: detected.yaml, reasons: detected.reasons, file: detected.file };
}

/** The latest setup steps run for the project's Candidates (Evidence of kind setup), newest first. */
async function setupRuns(db: Db, projectId: string, limit: number): Promise<SetupRun[]> {
  const rows = await db.evidence.findMany({
    where: { kind: "setup", candidate: { projectId } },
    orderBy: [{ completedAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(limit, 1), 50),
    select: {
      candidateId: true,
      checkId: true,
      completedAt: true,
      status: true,
      metrics: true,
      durationMs: true,
      outputKey: true,
      detail: true,
    },
  });
  return rows.map((r) => {
    const hit = (r.metrics as Record<string, unknown> | null)?.cacheHit;
    return {
      candidateId: r.candidateId,
      stepId: r.checkId,
      completedAt: r.completedAt,
      status: r.status,
      cacheHit: hit === 1 ? true : hit === 0 ? false : null,
      cacheKey: KEY_IN_DETAIL.exec(r.detail)?.[1] ?? null,
      durationMs: r.durationMs,
      logKey: r.outputKey,
      detail: r.detail,
    };
  });
}
