import { authFor } from "../../../../server/auth.ts";
import { serveBlob } from "../../../../server/blob-route.ts";
import { serverBlobStore } from "../../../../server/blobs.ts";
import { getDb } from "../../../../server/db.ts";

export const dynamic = "force-dynamic";

/** Evidence output, screenshots and patches, for members of the tenant owning the project in the key. */
export async function GET(req: Request, ctx: { params: Promise<{ key: string[] }> }): Promise<Response> {
  const { key } = await ctx.params;
  return serveBlob(req, key, { db: getDb(), blobs: serverBlobStore(), auth: authFor });
}
