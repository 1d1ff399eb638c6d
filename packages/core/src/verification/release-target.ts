import { z } from "zod";
import { DomainError } from "../errors.ts";
import { hasNoNul, NUL_MESSAGE } from "../input.ts";

/**
 * Where a promoted generation is released (projects.release_target): a folder on the worker host
 * (no path: `<data dir>/releases/<project>/<generation>/`), a webhook that receives the file list,
 * or nothing. One schema for the web (projects.setReleaseTarget) and the worker (delivery), so
 * what the web accepts is exactly what the worker can deliver. The messages say what to give: the
 * web shows them as they are.
 */
// Posix on purpose: the worker host is Linux, and core stays free of node:path (the browser imports it).
const isAbsolutePath = (p: string) => p.startsWith("/") && !p.includes("\0");

export const releaseTargetSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("folder"),
    path: z
      .string()
      .max(1000)
      .refine(isAbsolutePath, {
        error:
          "give an absolute folder path on the worker host (starting with /), or no path for the default <data dir>/releases/<project>/<generation>/",
      })
      .optional(),
  }),
  z.object({
    kind: z.literal("webhook"),
    url: z
      .url({ protocol: /^https?$/, error: "give an http:// or https:// URL for the webhook" })
      .max(2000)
      .refine(hasNoNul, { error: NUL_MESSAGE }),
  }),
  z.object({ kind: z.literal("none") }),
]);
export type ReleaseTarget = z.infer<typeof releaseTargetSchema>;

/** What a project without a stored target releases to (the column's default). */
export const DEFAULT_RELEASE_TARGET: ReleaseTarget = { kind: "folder" };

/** A stored target as the schema's type; a missing one is the default folder. */
export function parseReleaseTarget(raw: unknown): ReleaseTarget {
  const parsed = releaseTargetSchema.safeParse(raw ?? DEFAULT_RELEASE_TARGET);
  if (!parsed.success) throw new DomainError("INVALID_INPUT", `invalid release target: ${parsed.error.message}`);
  return parsed.data;
}

/** Whether two targets release to the same place (a repeat of setReleaseTarget writes nothing). */
export function sameReleaseTarget(a: ReleaseTarget, b: ReleaseTarget): boolean {
  if (a.kind === "folder" && b.kind === "folder") return (a.path ?? null) === (b.path ?? null);
  if (a.kind === "webhook" && b.kind === "webhook") return a.url === b.url;
  return a.kind === b.kind;
}
