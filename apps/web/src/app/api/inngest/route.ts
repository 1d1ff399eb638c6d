import { inngestRoute } from "../../../server/inngest.ts";

export const dynamic = "force-dynamic";

export const GET = (req: Request, ctx: unknown) => inngestRoute("GET", req, ctx);
export const POST = (req: Request, ctx: unknown) => inngestRoute("POST", req, ctx);
export const PUT = (req: Request, ctx: unknown) => inngestRoute("PUT", req, ctx);
