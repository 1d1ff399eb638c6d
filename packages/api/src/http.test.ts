import { DomainError } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { handleTrpcRequest } from "./http.ts";
import { ACME, emailFor, recordingDb, seedTenants } from "./testing/fixtures.ts";
import { testServices } from "./testing/services.ts";

// The tRPC HTTP wire format as the browser client speaks it (superjson envelopes), without Next.
const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

function get(path: string, input?: unknown): Request {
  const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  return new Request(`http://localhost/api/trpc/${path}${query}`);
}

describe("tRPC over HTTP", () => {
  it("serves projects.list to a viewer", async () => {
    const res = await handleTrpcRequest(get("projects.list", { tenantId: ACME.tenantId }), {
      db: () => t.db,
      services: testServices,
      localUserEmail: emailFor("viewer"),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.result.data.json.map((p: { name: string }) => p.name).sort()).toEqual(["blog", "shop"]);
  });

  it("answers bad input with 400 and the zod issues in data.zodError, reading nothing", async () => {
    const { db, touched } = recordingDb(t.db);
    const res = await handleTrpcRequest(get("projects.list", { tenantId: 123 }), {
      db: () => db,
      services: testServices,
      localUserEmail: emailFor("admin"),
    });
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error.json.data.code).toBe("BAD_REQUEST");
    expect(error.json.message).toMatch(/expected string.*\n.*at tenantId/);
    expect(error.json.data.zodError).toEqual([
      expect.objectContaining({ path: ["tenantId"], code: "invalid_type", expected: "string" }),
    ]);
    expect(touched).toEqual([]);
  });

  it("keeps data.zodError null for other errors", async () => {
    const res = await handleTrpcRequest(get("projects.list", { tenantId: ACME.tenantId }), {
      db: () => t.db,
      services: testServices,
      localUserEmail: "member@other.test",
    });
    expect(res.status).toBe(403);
    const { error } = await res.json();
    expect(error.json.data.zodError).toBeNull();
  });

  it("answers 401 when the local user does not exist", async () => {
    const res = await handleTrpcRequest(get("tenants.mine"), {
      db: () => t.db,
      services: testServices,
      localUserEmail: "nobody@nowhere.test",
    });
    expect(res.status).toBe(401);
  });

  it("answers 503 when the server has no database, and logs it", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await handleTrpcRequest(get("tenants.mine"), {
      db: () => {
        throw new DomainError("UNAVAILABLE", "DATABASE_URL is not set for the web server");
      },
      services: testServices,
    });
    expect(res.status).toBe(503);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('"code":"SERVICE_UNAVAILABLE"'));
    log.mockRestore();
  });
});
