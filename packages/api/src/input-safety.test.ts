import { createApiToken, createDb, type Db, setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { handleTrpcRequest } from "./http.ts";
import { ACME, cookieFrom, emailFor, seedTenants, signIn, tableFingerprint } from "./testing/fixtures.ts";
import { testServices } from "./testing/services.ts";

// What a probe run found, each as the request a client sends over HTTP: NUL bytes, an oversized
// body, task paths outside the work tree and a database that is down. Every one is a typed 4xx or
// 503 (never 500), and nothing is written.
const t = useTestDatabase();
const SHOP = "proj_00000000-0000-4000-8000-00000000a001";
const CLOSED = "postgresql://postgres@127.0.0.1:1/rhumbatron";
let admin = "";
let session = "";
let closedDb: Db;

beforeAll(async () => {
  await seedTenants(t.db);
  admin = (
    await createApiToken(
      t.db,
      { tenantId: ACME.tenantId, userId: "usr_acme_admin", name: "probe", role: "admin" },
      new Date(),
    )
  ).secret;
  await setUserPassword(t.db, "usr_acme_admin", "acme-admin-password");
  session = cookieFrom(await signIn(t.db, emailFor("admin"), "acme-admin-password"));
  closedDb = createDb(CLOSED);
});
afterAll(() => closedDb?.$disconnect());

interface Answer {
  status: number;
  code: string | undefined;
  message: string;
  zodPaths: string[];
}

function request(
  path: string,
  input: unknown,
  opts: { method?: "GET" | "POST"; body?: BodyInit; headers?: Record<string, string>; token?: string | null } = {},
): Request {
  const method = opts.method ?? "POST";
  const auth: Record<string, string> = opts.token === null ? {} : { authorization: `Bearer ${opts.token ?? admin}` };
  const headers: Record<string, string> = { ...auth, ...opts.headers };
  if (method === "GET") {
    const query = `?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    return new Request(`http://localhost/api/trpc/${path}${query}`, { headers });
  }
  return new Request(`http://localhost/api/trpc/${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: opts.body ?? JSON.stringify({ json: input }),
    ...(opts.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function send(req: Request, db: Db = t.db): Promise<Answer> {
  const res = await handleTrpcRequest(req, { db: () => db, services: testServices });
  const body = (await res.json()) as {
    error?: { json: { message: string; data: { code: string; zodError: { path: (string | number)[] }[] | null } } };
  };
  const error = body.error?.json;
  return {
    status: res.status,
    code: error?.data.code,
    message: error?.message ?? "",
    zodPaths: (error?.data.zodError ?? []).map((i) => i.path.join(".")),
  };
}

/** Sends the request and checks that not one row of any table changed. */
async function refused(req: Request): Promise<Answer> {
  const before = await tableFingerprint(t.db);
  const answer = await send(req);
  expect(await tableFingerprint(t.db)).toEqual(before);
  return answer;
}

const change = (tasks: unknown[] = [{ key: "a", title: "Model" }]) => ({
  tenantId: ACME.tenantId,
  projectId: SHOP,
  clientRequestId: "probe-1",
  change: { title: "Add a wishlist", riskTier: "low", tasks },
});

describe("NUL bytes are refused with 400, naming the field", () => {
  it.each([
    ["tokens.create", { tenantId: ACME.tenantId, name: "a\u0000b", role: "viewer" }, "name"],
    ["members.add", { tenantId: ACME.tenantId, email: "new@acme.test", name: "N\u0000", role: "viewer" }, "name"],
    ["members.add", { tenantId: ACME.tenantId, email: "n\u0000ew@acme.test", name: "New", role: "viewer" }, "email"],
    ["change.create", { ...change(), clientRequestId: "probe\u0000" }, "clientRequestId"],
    ["change.create", { ...change(), change: { ...change().change, description: "\u0000" } }, "change.description"],
    ["change.create", change([{ key: "a", title: "Model\u0000" }]), "change.tasks.0.title"],
    [
      "change.create",
      change([{ key: "a", title: "M", editPlan: [{ op: "run", argv: ["node", "-e\u0000"] }] }]),
      "change.tasks.0.editPlan.0.argv.1",
    ],
    [
      "projects.setReleaseTarget",
      { tenantId: ACME.tenantId, projectId: SHOP, target: { kind: "webhook", url: "https://x.test/\u0000" } },
      "target.url",
    ],
  ])("%s with a NUL in %j", async (path, input, field) => {
    const answer = await refused(request(path, input));
    expect(answer).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    expect(answer.zodPaths).toContain(field);
    expect(answer.message).toContain("NUL");
  });

  it.each([
    ["change.get", { tenantId: ACME.tenantId, changeId: "chg_\u0000" }, "changeId"],
    ["change.get", { tenantId: "ten_\u0000", changeId: "chg_x" }, "tenantId"],
    ["projects.search", { tenantId: ACME.tenantId, projectId: SHOP, query: "cart\u0000" }, "query"],
  ])("the query %s with a NUL in %j", async (path, input, field) => {
    const answer = await refused(request(path, input, { method: "GET" }));
    expect(answer).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    expect(answer.zodPaths).toContain(field);
  });
});

describe("task paths outside the work tree are refused at create time", () => {
  it.each([".git/hooks/pre-commit", "..\\..\\win", "C:/x", "C:\\x", "a/.GIT/b", "/etc/passwd", "a/../../b"])(
    "%j: 400 naming the path, no Change",
    async (bad) => {
      for (const task of [
        { key: "a", title: "M", editPlan: [{ op: "write", path: bad, content: "x" }] },
        { key: "a", title: "M", editPlan: [{ op: "delete", path: bad }] },
        { key: "a", title: "M", intents: { paths: [bad] } },
        { key: "a", title: "M", intents: { prefixes: [bad] } },
      ]) {
        const answer = await refused(request("change.create", change([task])));
        expect(answer).toMatchObject({ status: 400, code: "BAD_REQUEST" });
        expect(answer.message).toContain(JSON.stringify(bad));
      }
      expect(await t.db.change.count()).toBe(0);
    },
  );

  it("refuses an edit plan larger than a ChangeSet patch (512 KB)", async () => {
    const content = "x".repeat(300 * 1024);
    const answer = await refused(
      request(
        "change.create",
        change([
          {
            key: "a",
            title: "M",
            editPlan: [
              { op: "write", path: "a.txt", content },
              { op: "write", path: "b.txt", content },
            ],
          },
        ]),
      ),
    );
    expect(answer).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    expect(answer.message).toContain("512 KB");
  });
});

describe("the request body limit (2 MB)", () => {
  const big = () =>
    change([
      { key: "a", title: "M", editPlan: [{ op: "write", path: "a.txt", content: "x".repeat(3 * 1024 * 1024) }] },
    ]);

  it("answers a 3 MB change.create with 413 PAYLOAD_TOO_LARGE, writing nothing", async () => {
    const answer = await refused(request("change.create", big()));
    expect(answer).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(answer.message).toBe("the request body is larger than the 2 MB (2097152 bytes) this server accepts");
  });

  it("counts the streamed bytes when Content-Length is absent or lies", async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ json: big() }));
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
          controller.close();
        },
      });
    const chunked = await refused(request("change.create", null, { body: stream() }));
    expect(chunked).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    const lying = await refused(
      request("change.create", null, { body: stream(), headers: { "content-length": "100" } }),
    );
    expect(lying).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
  });

  it("refuses a declared Content-Length over the limit without reading the body", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const answer = await refused(
      request("change.create", null, { body, headers: { "content-length": String(3 * 1024 * 1024) } }),
    );
    expect(answer).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(pulled).toBeLessThanOrEqual(1); // a stream pulls once to fill its queue when it starts
  });

  it("still serves a body under the limit", async () => {
    const answer = await send(request("tokens.list", { tenantId: ACME.tenantId }, { method: "GET" }));
    expect(answer.status).toBe(200);
  });
});

describe("input that cannot be read is a 400, not a 500", () => {
  it.each([
    ["a body that is not JSON", request("tokens.create", null, { body: "{not json" })],
    [
      "a query input that is not JSON",
      new Request("http://localhost/api/trpc/tokens.list?input=%7Bnope", {
        headers: { authorization: `Bearer ${admin}` },
      }),
    ],
    [
      "superjson metadata that does not decode",
      request("tokens.create", null, {
        body: JSON.stringify({
          json: { tenantId: ACME.tenantId, name: "x", role: "1x" },
          meta: { values: { role: ["bigint"] } },
        }),
      }),
    ],
    [
      "a superjson prototype key",
      request("tokens.create", null, {
        body: JSON.stringify({ json: { tenantId: ACME.tenantId }, meta: { values: { "__proto__.x": ["undefined"] } } }),
      }),
    ],
  ])("%s", async (_name, req) => {
    const answer = await refused(req);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  });
});

describe("a database that cannot be reached", () => {
  it("answers 503 with a message to try again, for a token, a session and a test user alike", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const req of [
        request("tokens.list", { tenantId: ACME.tenantId }, { method: "GET" }),
        request("tenants.mine", undefined, {
          method: "GET",
          token: null,
          headers: { cookie: session },
        }),
        request("change.create", change()),
      ]) {
        const answer = await send(req, closedDb);
        expect(answer).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
        expect(answer.message).toBe("the database cannot be reached; try again in a moment");
      }
      const res = await handleTrpcRequest(request("tenants.mine", undefined, { method: "GET" }), {
        db: () => closedDb,
        services: testServices,
        localUserEmail: "admin@acme.test",
      });
      expect(res.status).toBe(503);
      expect(log).toHaveBeenCalledWith(expect.stringContaining('"code":"SERVICE_UNAVAILABLE"'));
    } finally {
      log.mockRestore();
    }
  });
});
