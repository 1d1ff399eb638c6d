import { DomainError } from "../errors.ts";

/**
 * Names on disk for Sandboxes and run directories (docs/protocol.md, The Sandbox: `/workspace/<run>`,
 * `/workspace/cand-<id>`, one Sandbox `proj-<uuid>` per Project). The IDs are checked strictly
 * because the names become path segments on the host.
 */
const TAIL = "[A-Za-z0-9][A-Za-z0-9_-]{0,127}";
const RUN_ID = new RegExp(`^run_${TAIL}$`);
const CANDIDATE_ID = new RegExp(`^cand_(${TAIL})$`);
const PROJECT_ID = new RegExp(`^proj_(${TAIL})$`);
const RUN_DIR = new RegExp(`^(run_|cand-)${TAIL}$`);

function shaped(id: string, pattern: RegExp, what: string): RegExpExecArray {
  const m = pattern.exec(id);
  if (!m) throw new DomainError("INVALID_INPUT", `not a ${what} ID: ${JSON.stringify(id)}`);
  return m;
}

/** An agent run's directory is named after the run: `run_<x>`. */
export function dirForAgentRun(runId: string): string {
  return shaped(runId, RUN_ID, "run")[0];
}

/** `cand_<id>` -> `cand-<id>`. */
export function dirForCandidate(candidateId: string): string {
  return `cand-${shaped(candidateId, CANDIDATE_ID, "Candidate")[1]}`;
}

/** `proj_<uuid>` -> `proj-<uuid>`. */
export function sandboxName(projectId: string): string {
  return `proj-${shaped(projectId, PROJECT_ID, "Project")[1]}`;
}

export function isRunDirName(dirName: string): boolean {
  return RUN_DIR.test(dirName);
}

/**
 * A command's working directory relative to its workspace, normalised (`a/./b/` -> `a/b`, `` for
 * the root). Absolute paths and any `..` are refused: the directory must stay inside the workspace.
 */
export function workspaceRelativePath(cwd: string | undefined): string {
  if (cwd === undefined || cwd === "" || cwd === ".") return "";
  const parts = cwd.split("/").filter((p) => p !== "" && p !== ".");
  if (cwd.startsWith("/") || parts.includes("..") || cwd.includes("\0")) {
    throw new DomainError("INVALID_INPUT", `cwd must be a relative path inside the workspace: ${JSON.stringify(cwd)}`);
  }
  return parts.join("/");
}
