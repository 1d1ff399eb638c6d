import { type Auth, hasAtLeast, membershipIn, resolveCaller } from "@rhumbatron/api";
import { type BlobStore, isValidBlobKey } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { tenantOfProject } from "@rhumbatron/db";

/** The key prefixes the browser may read, each followed by the project that owns the blob. */
const READABLE_ROOTS = ["evidence", "source"] as const;

/**
 * The project a readable blob key belongs to, or null when the key is not one the browser may read:
 * not a valid key (empty, `.`/`..` or unusual characters in a segment, so no path traversal), not
 * under `evidence/<project>/` or `source/<project>/`, or naming nothing below the project.
 */
export function projectOfBlobKey(segments: readonly string[]): string | null {
  if (segments.length < 3) return null;
  const key = segments.join("/");
  if (segments.some((s) => s.includes("/")) || !isValidBlobKey(key)) return null;
  const [root, projectId] = segments;
  if (!READABLE_ROOTS.includes(root as (typeof READABLE_ROOTS)[number]) || !projectId) return null;
  return projectId;
}

/**
 * Served as stored only for images; everything else (logs, patches, JSON) as plain text, so a blob
 * can never run as a page in this origin.
 */
export function blobContentType(key: string): string {
  const ext = key.slice(key.lastIndexOf(".") + 1).toLowerCase();
  if (ext === "png") return "image/png";
  if (ext === "jpg" || ext === "jpeg") return "image/jpeg";
  if (ext === "webp") return "image/webp";
  if (ext === "zip") return "application/zip"; // a Playwright trace (verification/playwright-check.ts)
  return "text/plain; charset=utf-8";
}

const refuse = (status: number, message: string) =>
  new Response(message, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });

/**
 * GET /api/blobs/<key…>: one blob for a caller with at least the viewer role in the tenant that
 * owns the project named in the key. Another tenant's blob is 404 (the same answer as a blob that
 * does not exist, so it reveals nothing); a malformed key is 400 before anything is read.
 */
export async function serveBlob(
  req: Request,
  segments: readonly string[],
  deps: { db: Db; blobs: BlobStore; auth: (db: Db) => Auth; localUserEmail?: string },
): Promise<Response> {
  const projectId = projectOfBlobKey(segments);
  if (!projectId) return refuse(400, "invalid blob key");
  const options = deps.localUserEmail === undefined ? {} : { localUserEmail: deps.localUserEmail };
  const caller = await resolveCaller(deps.db, req.headers, { auth: deps.auth, ...options });
  if (!caller) return refuse(401, "no signed-in user");
  const tenantId = await tenantOfProject(deps.db, projectId);
  const membership = tenantId ? membershipIn(caller, tenantId) : undefined;
  if (!membership || !hasAtLeast(membership.role, "viewer")) return refuse(404, "not found");
  const key = segments.join("/");
  const blob = await deps.blobs.get(key);
  if (!blob) return refuse(404, "not found");
  return new Response(blob.body as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      "content-type": blobContentType(key),
      "content-length": String(blob.body.byteLength),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; img-src 'self'; sandbox",
      // Blobs never change under a key, but access may: the browser keeps them, shared caches do not.
      "cache-control": "private, max-age=300",
    },
  });
}
