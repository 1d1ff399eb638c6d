import { z } from "zod";
import { PATCH_MAX_BYTES } from "../config.ts";
import { sha256, toHex } from "../events/hash.ts";
import { repoPathSchema, safeText, utf8Bytes } from "../input.ts";
import type { TaskState } from "./model.ts";
import { CHANGE_STATUS_SETS, TASK_STATE_SETS } from "./statuses.ts";

/**
 * A fixture (docs/agents.md, Publishing a fix by hand): a ChangeSet for a Task written by a person, not by
 * an Agent run: for someone who fixes the Task themselves, and for tests and demos. It goes out as
 * `fixture.publish` on the integration queue; the worker commits the files on a fork of canonical
 * at the Task's base, publishes the ChangeSet and completes the Task, and the pipeline goes on
 * (composition, verification) as after an Agent.
 */
export const FIXTURE_MAX_FILES = 200;

const filePath = repoPathSchema.refine((p) => !p.endsWith("/"), { message: "a file path cannot end with '/'" });

/** One file of a fixture: its whole new text, or its deletion. Binary files are not supported. */
export const fixtureFile = z.union([
  z.strictObject({ path: filePath, content: safeText(PATCH_MAX_BYTES) }),
  z.strictObject({ path: filePath, delete: z.literal(true) }),
]);
export type FixtureFile = z.infer<typeof fixtureFile>;

/** The bytes a fixture writes: what its ChangeSet's patch holds at least. */
export function fixtureBytes(files: readonly FixtureFile[]): number {
  return files.reduce((n, f) => n + ("content" in f ? utf8Bytes(f.content) : 0), 0);
}

export const fixtureInput = z
  .object({
    summary: safeText(2000).trim().min(1, "say what the fix does"),
    files: z.array(fixtureFile).min(1, "give at least one file").max(FIXTURE_MAX_FILES),
  })
  .superRefine((input, ctx) => {
    const seen = new Set<string>();
    for (const [i, f] of input.files.entries()) {
      if (seen.has(f.path))
        ctx.addIssue({ code: "custom", path: ["files", i, "path"], message: `${f.path} is given twice` });
      seen.add(f.path);
    }
    // The same limit as an edit plan: refused before anything is written, not cut short afterwards.
    if (fixtureBytes(input.files) > PATCH_MAX_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: `the files hold more than a ChangeSet patch (${PATCH_MAX_BYTES} bytes, 512 KB); split the fix`,
      });
    }
  });
export type FixtureInput = z.infer<typeof fixtureInput>;

/**
 * SHA-256 of what a fixture says (summary, and the files in path order), hex: the same request is
 * the same fixture, whatever order its files came in.
 */
export function fixtureContentHash(input: FixtureInput): string {
  const files = [...input.files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => ["content" in f ? "write" : "delete", f.path, "content" in f ? f.content : null]);
  return toHex(sha256(new TextEncoder().encode(JSON.stringify([input.summary, files]))));
}

/**
 * The run and ChangeSet a fixture command records, derived from its command ID, so a redelivery
 * finds the first ones. The run ID has the shape of an Agent run's (its fork is `ws-<uuid>`), so
 * sweeps and cleanup find the fork as they find an Agent's.
 */
export function fixtureRecordIds(commandId: string): { runId: string; changeSetId: string } {
  const h = toHex(sha256(new TextEncoder().encode(commandId)));
  const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  return { runId: `run_${uuid}`, changeSetId: `cs_${uuid}` };
}

const PUBLISHABLE = new Set<string>(TASK_STATE_SETS.fixturePublishable);
const FINAL_CHANGE = new Set<string>(CHANGE_STATUS_SETS.final);

/**
 * Why a fixture may not be published for this Task now, or null when it may. A ready Task (its
 * dependencies are done) may take one instead of its Agent; a failed or blocked one may be
 * finished by hand. Not a pending Task (its dependencies' ChangeSets do not exist yet), not a
 * running one (an Agent holds it: wait until it ends), not a completed one (it has its ChangeSet),
 * not a cancelled one, and nothing of a promoted or cancelled Change. Checked by the API and again
 * by the worker, whose check is the one that counts.
 */
export function fixtureRefusal(
  task: { key: string; state: TaskState | string; blockedLimit: string | null; attempt: number },
  change: { status: string },
  attempt?: number,
): string | null {
  if (FINAL_CHANGE.has(change.status)) return `the change is ${change.status}: nothing more is published for it`;
  if (attempt !== undefined && attempt !== task.attempt)
    return `task ${task.key} was retried (attempt ${task.attempt}) after the fix was sent for attempt ${attempt}`;
  if (task.state === "blocked" && task.blockedLimit === "cancelled") return `task ${task.key} was cancelled`;
  if (PUBLISHABLE.has(task.state)) return null;
  if (task.state === "pending") return `task ${task.key} waits for the Tasks it depends on; publish once it is ready`;
  if (task.state === "running")
    return `an Agent is working on task ${task.key}; publish a fix once it has finished or failed`;
  return `task ${task.key} is ${task.state}: it has its ChangeSet already`;
}
