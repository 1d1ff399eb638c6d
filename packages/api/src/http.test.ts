import { DomainError, publicUrl } from "@rhumbatron/core";
import { setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { handleTrpcRequest } from "./http.ts";
import { ACME, cookieFrom, emailFor, recordingDb, seedTenants, signIn } from "./testing/fixtures.ts";
import { testServices, testSettings } from "./testing/services.ts";

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

describe("a signed-in browser's mutation from another site", () => {
  const PASSWORD = "origin-check-password";
  const own = publicUrl(testSettings());
  let cookie = "";
  beforeAll(async () => {
    await setUserPassword(t.db, "usr_acme_admin", PASSWORD);
    const res = await signIn(t.db, emailFor("admin"), PASSWORD);
    expect(res.status).toBe(200);
    cookie = cookieFrom(res);
  });

  const createProject = (name: string, headers: Record<string, string>) =>
    handleTrpcRequest(
      new Request(`${own}/api/trpc/projects.create`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, ...headers },
        body: JSON.stringify({ json: { tenantId: ACME.tenantId, name } }),
      }),
      { db: () => t.db, services: testServices },
    );
  const projectNamed = (name: string) => t.db.project.count({ where: { tenantId: ACME.tenantId, name } });

  it("is refused with 403 before it runs, and changes nothing", async () => {
    for (const origin of ["https://evil.example", "http://localhost:1", "null"]) {
      const res = await createProject("from-elsewhere", { origin });
      expect(res.status, origin).toBe(403);
      const { error } = await res.json();
      expect(error.json.data.code).toBe("FORBIDDEN");
      expect(error.json.message).toContain(`not from ${origin}`);
    }
    expect(await projectNamed("from-elsewhere")).toBe(0);
  });

  it("runs from the app's own pages, and from a client that sends no Origin (the CLI, curl)", async () => {
    expect((await createProject("from-own-page", { origin: own })).status).toBe(200);
    expect((await createProject("from-curl", {})).status).toBe(200);
    expect(await projectNamed("from-own-page")).toBe(1);
    expect(await projectNamed("from-curl")).toBe(1);
  });

  it("does not stop a query: reading is not a change, and the browser's CORS rules keep the answer from the other site", async () => {
    const res = await handleTrpcRequest(
      new Request(
        `${own}/api/trpc/projects.list?input=${encodeURIComponent(JSON.stringify({ json: { tenantId: ACME.tenantId } }))}`,
        {
          headers: { cookie, origin: "https://evil.example" },
        },
      ),
      { db: () => t.db, services: testServices },
    );
    expect(res.status).toBe(200);
  });
});
