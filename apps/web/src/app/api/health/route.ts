import { healthHttpStatus } from "../../../server/health.ts";
import { measureHealth } from "../../../server/measure-health.ts";

// Measured on every request: never prerendered, never cached.
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const report = await measureHealth();
  return Response.json(report, { status: healthHttpStatus(report), headers: { "cache-control": "no-store" } });
}
