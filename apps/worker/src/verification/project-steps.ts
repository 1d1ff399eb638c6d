import { readFile, realpath, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  type CommandResult,
  candidateFork,
  canonicalRepo,
  failureExcerpt,
  type PlannedCheck,
  type ProjectChecks,
  parseRequirement,
  type RhumbatronConfig,
  type SandboxWorkspace,
  type SetupStep,
  sandboxName,
  sourceKeys,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  candidateForkKept,
  recordEvidence,
  type VerificationInput,
  type VerificationOutcome,
  withRepoToken,
} from "@rhumbatron/db";
import { withAllowedHosts } from "../sandbox/registry-proxy.ts";
import { SetupCache, setupCacheKey } from "../sandbox/setup-cache.ts";
import { lastLines } from "./checks.ts";
import { atLeast, checksAtCommit, versionIn } from "./project-checks.ts";
import {
  evidenceFrom,
  evidenceKey,
  OUTPUT_TAIL_LINES,
  refusalEvidence,
  type SerializedEvidence,
  type VerificationDeps,
  type VerificationRun,
} from "./verification-run.ts";

/**
 * The steps of a Candidate's verification that read the project's own declarations
 * (docs/checks-file.md): which checks it has (from the base), whether the worker can meet what it requires,
 * and its setup steps, with the registries they may reach and the cache of what they produced.
 */
/** A key file larger than this keys nothing (it is read whole to hash it). */
const KEY_FILE_MAX_BYTES = 64 * 1024 * 1024;

type ChecksStepResult =
  | { ok: true; project: ProjectChecks }
  | { ok: false; outcome: Extract<VerificationOutcome, { status: "rejected" }> };

/**
 * Step `checks`: the project's checks at the Candidate's base, never the Candidate's own (a Change
 * cannot weaken the gate that judges it): its checks file, or the detected checks with the file that
 * would declare them (stored for the page and `candidate checks`). A file that does not parse, or
 * a repository with nothing to detect, rejects the Candidate with the file's errors as Evidence.
 */
/**
 * The repository that holds a Candidate's base commit: canonical, or for a Candidate stacked on
 * another (docs/landing.md) that one's fork, unless the sweep removed it, which it does only once
 * the commit is in canonical.
 */
export async function baseRepo(deps: VerificationDeps, input: VerificationInput): Promise<string> {
  const below = input.candidate.stackedOn;
  if (!below) return canonicalRepo(input.project.id);
  return (await candidateForkKept(deps.db, below)) ? candidateFork(below) : canonicalRepo(input.project.id);
}

export async function checksStep(v: VerificationRun): Promise<ChecksStepResult> {
  const { deps, run, input, ids } = v;
  const { project, candidate } = input;
  const read = await run.step("checks", async () => {
    if (deps.projectChecks) return { ok: true as const, project: deps.projectChecks };
    // The base's checks file: canonical's, or, stacked, the same file in the tree below (the stack
    // never builds on a Candidate that edits .rhumbatron/, so it is canonical's too).
    const repo = await baseRepo(deps, input);
    const key = sourceKeys.proposedChecks(project.id, candidate.baseCommit);
    const r = await withRepoToken(
      deps.db,
      { repo, mode: "read", purpose: "checks file" },
      deps.config,
      deps.now,
      (token) =>
        checksAtCommit(
          candidate.baseCommit,
          {
            files: () => deps.source.files(repo, token, candidate.baseCommit),
            read: (oid) => deps.source.readBlob(repo, token, oid),
          },
          key,
        ),
    );
    if (r.ok && r.proposal !== null) {
      await deps.blobs.put(key, new TextEncoder().encode(r.proposal), { contentType: "text/yaml; charset=utf-8" });
    }
    return r.ok ? { ok: true as const, project: r.project } : r;
  });
  if (read.ok) return read;
  await run.txStep("evidence:checks-file", (ctx) =>
    recordEvidence(ctx, ids, refusalEvidence(ids.candidateId, "checks-file", read.lines, deps.now()), deps),
  );
  return {
    ok: false,
    outcome: { status: "rejected", reason: read.reason, gaps: read.lines.map((l) => `checks file: ${l}`) },
  };
}

/**
 * Step `requires`: every tool the checks file requires runs in the Candidate's Sandbox at the
 * version asked (`<tool> --version`). A Candidate the worker cannot meet is refused saying what is
 * missing and how to install it; it is not a failing check, since the code was never tried.
 */
export async function requiresStep(
  v: VerificationRun,
  ws: SandboxWorkspace,
  plan: VerificationPlan,
): Promise<VerificationOutcome | null> {
  const needs = (plan.requires ?? []).flatMap((r) => parseRequirement(r) ?? []);
  if (needs.length === 0) return null;
  const unmet = await v.run.step("requires", async () => {
    const out: string[] = [];
    for (const need of needs) {
      const r = await ws
        .run({ argv: [need.tool, "--version"], allow: [need.tool], timeoutMs: 30_000 })
        .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
      if (r instanceof Error || r.exitCode !== 0) {
        out.push(
          `${need.tool} does not run in the worker's Sandbox (${r instanceof Error ? r.message : (r.stderr.trim().split("\n")[0] ?? `exit ${r.exitCode}`)}): install ${need.tool} on the worker's host, in /usr/bin or /usr/local/bin (e.g. with apt-get)`,
        );
        continue;
      }
      const version = versionIn(`${r.stdout}\n${r.stderr}`);
      if (need.atLeast && (!version || !atLeast(version, need.atLeast))) {
        out.push(
          `${need.text}: the worker has ${need.tool} ${version ?? "of a version it does not print"}; install ${need.tool} ${need.atLeast} or later on the worker's host`,
        );
      }
    }
    return out;
  });
  if (unmet.length === 0) return null;
  return {
    status: "rejected",
    reason: "the worker cannot meet what the project requires; nothing was checked",
    gaps: unmet.map((m) => `requires: ${m}`),
  };
}

/**
 * Step `setup-<id>` for each setup step of the checks file, in the Candidate's workspace before any
 * check: each with its log kept as Evidence (`setup-<id>`, kind setup). A step that names what it
 * produces (`cache`) and the files that key it (`key`) is cached by content (the key files' bytes,
 * its command, the toolchain's versions; sandbox/setup-cache.ts, one cache per project): a later
 * Candidate with the same inputs gets the saved result copied in and runs nothing, and its Evidence
 * says it was restored, from which key. A step that fails rejects the Candidate with its output; it
 * is the project's preparation, not one of its checks.
 */
export async function setupStep(
  v: VerificationRun,
  ws: SandboxWorkspace,
  project: ProjectChecks,
): Promise<VerificationOutcome | null> {
  const { deps, run, input, ids } = v;
  const tools = (project.file.requires ?? []).flatMap((r) => parseRequirement(r)?.tool ?? []);
  for (const step of project.file.setup ?? []) {
    const id = `setup-${step.id}`;
    const e = await run.step(id, () => runSetupStep(deps, input, ws, { project, step, tools }));
    await run.txStep(`evidence:${id}`, (ctx) =>
      recordEvidence(ctx, ids, { ...e, kind: "setup", completedAt: new Date(e.completedAt) }, deps),
    );
    if (e.status !== "pass") {
      return {
        status: "rejected",
        reason: `setup step ${step.id} did not finish; no check ran`,
        gaps: [`setup: ${step.id} ${e.detail}`],
      };
    }
  }
  return null;
}

/**
 * One setup step in a workspace, from the setup cache when its inputs were seen, else run with its
 * registries; its record (not yet Evidence). `tag` keeps a culprit probe's log apart from the
 * Candidate's own (culprit.ts).
 */
export async function runSetupStep(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  s: { project: ProjectChecks; step: SetupStep; tools: string[] },
  tag = "",
): Promise<SerializedEvidence> {
  const { project, step, tools } = s;
  const id = `setup-${step.id}`;
  const started = deps.now();
  const timeoutSeconds = step.timeout ?? 600;
  const setupCheck: PlannedCheck = { id, kind: "command", timeoutSeconds, argv: step.run, reason: "setup" };
  const record = (r: Parameters<typeof evidenceFrom>[4], key: string | null) =>
    evidenceFrom(input.candidate.id, setupCheck, started, deps.now(), { command: step.run.join(" "), ...r }, key);
  const cache = step.cache && step.key ? setupCacheOf(ws, input.project.id, deps.config) : null;
  const cacheKey = cache && step.key ? await stepCacheKey(ws, step, tools) : null;
  const hit = cache && cacheKey ? await cache.restore(cacheKey, ws.path) : null;
  if (hit && cacheKey) {
    return record(
      {
        status: "pass",
        coverage: "checked_supported",
        metrics: { cacheHit: 1, restoredBytes: hit.bytes },
        detail: `restored from the setup cache (key ${cacheKey.slice(0, 12)}): ${hit.paths.join(", ")}; the command did not run`,
        durationMs: deps.now().getTime() - started.getTime(),
      },
      null,
    );
  }
  const { r, visits } = await withRegistries(project.file.registries ?? [], (network) =>
    ws.run({ argv: step.run, allow: tools, timeoutMs: timeoutSeconds * 1000, ...(network ? { network } : {}) }),
  );
  const log = `$ ${step.run.join(" ")}\n${r.stdout}\n${r.stderr}${visits}`;
  const key = evidenceKey(input.project.id, input.candidate.id, `${id}${tag}.log`);
  await deps.blobs.put(key, new TextEncoder().encode(log), { contentType: "text/plain; charset=utf-8" });
  const ok = r.exitCode === 0 && !r.timedOut;
  const saved = ok && cache && cacheKey && step.cache ? await cache.save(cacheKey, ws.path, step.cache) : null;
  const cached = saved
    ? saved.kept
      ? `; saved to the setup cache (key ${cacheKey?.slice(0, 12)}): ${saved.saved.join(", ") || "nothing"}${saved.missing.length ? ` (not produced: ${saved.missing.join(", ")})` : ""}`
      : "; too large for the setup cache, not kept"
    : "";
  return record(
    {
      status: ok ? "pass" : r.timedOut ? "error" : "fail",
      coverage: ok ? "checked_supported" : "not_checked",
      metrics: { ...(r.exitCode === null ? {} : { exitCode: r.exitCode }), ...(cache ? { cacheHit: 0 } : {}) },
      detail: ok
        ? `prepared${cached}`
        : r.timedOut
          ? `timed out after ${timeoutSeconds} s`
          : `exited with ${r.exitCode ?? r.signal}`,
      durationMs: r.durationMs,
      outputTail: ok ? null : lastLines(log, OUTPUT_TAIL_LINES),
      excerpt: ok ? null : failureExcerpt(`${r.stdout}\n${r.stderr}`),
    },
    key,
  );
}

/**
 * Runs a setup command with the network its checks file allows: none without `registries`; with
 * them, the host's filtering proxy letting through only those hosts (sandbox/registry-proxy.ts).
 * What it let through and what it refused is added to the step's log.
 */
async function withRegistries(
  registries: readonly string[],
  run: (network: { proxySocket: string } | null) => Promise<CommandResult>,
): Promise<{ r: CommandResult; visits: string }> {
  if (registries.length === 0) return { r: await run(null), visits: "" };
  const { result, reached, refused } = await withAllowedHosts(registries, (network) => run(network));
  const visits = `\n[network] allowed: ${registries.join(", ")}; reached: ${reached.join(", ") || "none"}; refused: ${refused.join(", ") || "none"}\n`;
  return { r: result, visits };
}

/**
 * One project's setup cache, beside the projects' Sandbox folders on the host (never inside one, so
 * no command can reach it): `<sandbox root>/.setup-cache/<project folder>`.
 */
function setupCacheOf(ws: SandboxWorkspace, projectId: string, config: RhumbatronConfig): SetupCache {
  const sandboxRoot = dirname(dirname(ws.path));
  return new SetupCache({
    root: join(sandboxRoot, ".setup-cache", sandboxName(projectId)),
    maxBytes: config.sandbox.setupCacheMaxBytes,
  });
}

/** A setup step's cache key: its key files as the workspace holds them, its command, the toolchain's versions. */
async function stepCacheKey(ws: SandboxWorkspace, step: SetupStep, tools: readonly string[]): Promise<string> {
  const keyFiles = await Promise.all(
    (step.key ?? []).map(async (path) => ({ path, bytes: await readInside(ws.path, path, KEY_FILE_MAX_BYTES) })),
  );
  const toolchain: Record<string, string> = {};
  for (const tool of ["node", ...tools]) {
    const r = await ws.run({ argv: [tool, "--version"], allow: [tool], timeoutMs: 30_000 }).catch(() => null);
    toolchain[tool] = r && r.exitCode === 0 ? `${r.stdout}${r.stderr}`.trim() : "unavailable";
  }
  return setupCacheKey({ stepId: step.id, argv: step.run, keyFiles, toolchain });
}

/** A file of the workspace (never one a link leads to outside it), or null when absent or larger than `max`. */
async function readInside(root: string, rel: string, max: number): Promise<Buffer | null> {
  const real = await realpath(join(root, rel)).catch(() => null);
  const inside = await realpath(root);
  if (!real?.startsWith(`${inside}/`)) return null;
  const s = await stat(real);
  if (!s.isFile() || s.size > max) return null;
  return readFile(real);
}
