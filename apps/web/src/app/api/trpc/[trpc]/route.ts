import { handleTrpcRequest } from "@rhumbatron/api";
import { getDb } from "../../../../server/db.ts";
import { defaultServices } from "../../../../server/services.ts";

export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return handleTrpcRequest(req, { db: getDb, services: defaultServices });
}

export { handler as GET, handler as POST };
