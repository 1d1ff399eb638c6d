import { getDb } from "../../../../server/db.ts";
import { handleTrpcRequest } from "../../../../server/http.ts";

export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return handleTrpcRequest(req, { db: getDb });
}

export { handler as GET, handler as POST };
