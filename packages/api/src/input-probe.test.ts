import { defaultPolicyDocument, loadConfig } from "@rhumbatron/core";
import { createApiToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { handleTrpcRequest } from "./http.ts";
import { appRouter } from "./routers/_app.ts";
import { ACME, seedProcedureRows, seedTenants, tableFingerprint } from "./testing/fixtures.ts";
import { testServices } from "./testing/services.ts";

/**
 * The probe as a property: every procedure of the app router, called over the real HTTP handler by
 * an admin of a real tenant with a plausible input broken in one place (a NUL byte, an oversized
 * string, a wrong type, an absent field, a path outside the work tree, an unknown ID). The answer is
 * a 4xx, never a 500, and not one row of any table changes. A procedure without a sample here fails
 * the file, so a new procedure is probed from its first commit.
 */
const t = useTestDatabase();

const SHOP = "proj_00000000-0000-4000-8000-00000000a001";
const CHANGE = "chg_probe";
const CHANGESET = "cs_probe";
const CANDIDATE = "cand_0000000000000000000000000000b17a";
const EXTRA_MEMBER = "usr_probe_extra";
const TREE = "a".repeat(40);

/** Keys whose value names a row: an unknown one must be refused (or found empty), never a 500. */
const ID_KEYS = new Set([
  "tenantId",
  "projectId",
  "changeId",
  "changeSetId",
  "candidateId",
  "taskId",
  "tokenId",
  "userId",
  "deadLetterId",
  "notificationId",
  "webhookId",
  "deliveryId",
]);

// A plausible input for every procedure, naming the rows beforeAll seeds. Strings everywhere a
// procedure takes one, so every string field gets its NUL and its oversized value.
const SAMPLES: Record<string, Record<string, unknown>> = {
  "tenants.mine": {},
  "projects.list": {},
  "projects.create": { name: "probe-new" },
  "projects.import": {
    name: "probe-imported",
    from: "https://git.example.com/team/shop.git",
    branch: "main",
    credentials: { username: "ada", password: "probe-token" },
  },
  "projects.createForPush": { name: "probe-pushed" },
  "projects.pushAccess": { projectId: SHOP },
  "projects.archive": { projectId: SHOP },
  "projects.overview": { projectId: SHOP },
  "projects.checks": { projectId: SHOP },
  "projects.events": { projectId: SHOP, lastEventId: "12" },
  "projects.cloneAccess": { projectId: SHOP },
  "projects.releases": { projectId: SHOP, limit: 5 },
  "projects.setReleaseTarget": { projectId: SHOP, target: { kind: "webhook", url: "https://deploy.example.com/hook" } },
  "projects.setAgent": { projectId: SHOP, agent: { kind: "command", argv: ["sh", "agent.sh"], timeoutSeconds: 60 } },
  "projects.indexes": { projectId: SHOP, limit: 5 },
  "projects.search": { projectId: SHOP, query: "cart", limit: 5 },
  "operations.outbox": { state: "failed", limit: 10 },
  "operations.outboxCounts": {},
  "operations.queues": {},
  "operations.streamLag": {},
  "operations.meters": {},
  "operations.deadLetters": { status: "open", limit: 10 },
  "operations.retryDeadLetter": { deadLetterId: "dl_cmd_probe1" },
  "operations.dismissDeadLetter": { deadLetterId: "dl_cmd_probe2", reason: "seen it" },
  "change.create": {
    projectId: SHOP,
    clientRequestId: "probe-1",
    landWhenReady: false,
    change: {
      title: "Add a wishlist",
      description: "A page to keep products for later",
      riskTier: "high",
      goals: { p95LatencyMs: 200 },
      invariants: ["the cart total never changes"],
      contractChanges: { added: ["GET /api/wishlist"], removed: [], changed: ["POST /api/cart"] },
      tasks: [
        {
          key: "page",
          title: "Wishlist page",
          intents: { paths: ["public/wishlist.html"], prefixes: ["public/"] },
          editPlan: [
            { op: "write", path: "public/wishlist.html", content: "<h1>Wishlist</h1>\n" },
            { op: "replace", path: "public/index.html", find: "</nav>", replace: "<a href=wishlist.html>W</a></nav>" },
            { op: "delete", path: "public/old.html" },
            { op: "run", argv: ["node", "--check", "public/wishlist.js"] },
          ],
        },
        { key: "link", title: "Link it", dependsOn: ["page"] },
      ],
    },
  },
  "change.get": { changeId: CHANGE },
  "change.list": { projectId: SHOP, limit: 10 },
  "change.changeSets": { changeId: CHANGE },
  "change.candidates": { changeId: CHANGE },
  "change.patch": { changeSetId: CHANGESET },
  "change.contextPacket": { runId: "run_probe" },
  "change.cancel": { changeId: CHANGE, reason: "not needed" },
  "change.setLanding": { changeId: CHANGE, landWhenReady: true },
  "change.attempts": { changeId: CHANGE },
  "change.pickAttempt": { changeId: CHANGE, attempt: 2 },
  "task.retry": { taskId: "task_probe" },
  "task.publishFixture": {
    taskId: "task_probe",
    summary: "Fix the cart total",
    files: [
      { path: "public/cart.js", content: "export const total = 1;\n" },
      { path: "public/old.js", delete: true },
    ],
  },
  "task.list": { changeId: CHANGE },
  "task.transcript": { taskId: "task_probe" },
  "landing.queue": { projectId: SHOP },
  "landing.status": { projectId: SHOP },
  "landing.setState": { projectId: SHOP, state: "paused" },
  "landing.setPriority": { changeId: CHANGE, priority: "front" },
  "tests.list": { projectId: SHOP },
  "tests.quarantine": { projectId: SHOP, checkId: "unit", testId: "cart > adds", reason: "flaky" },
  "tests.release": { projectId: SHOP, checkId: "unit", testId: "cart > adds" },
  "candidate.list": { projectId: SHOP, limit: 10 },
  "candidate.get": { candidateId: CANDIDATE },
  "candidate.patch": { candidateId: CANDIDATE },
  "candidate.interdiff": { candidateId: CANDIDATE },
  "candidate.checks": { candidateId: CANDIDATE },
  "candidate.approve": { candidateId: CANDIDATE, treeHash: TREE, note: "looks right" },
  "candidate.reject": { candidateId: CANDIDATE, treeHash: TREE, note: "no" },
  "candidate.promote": { candidateId: CANDIDATE },
  "candidate.rerunCheck": { candidateId: CANDIDATE, checkId: "unit" },
  "tokens.create": { name: "probe", role: "viewer" },
  "tokens.list": {},
  "tokens.revoke": { tokenId: "atk_probe" },
  "members.list": {},
  "members.add": { email: "probe-new@acme.test", name: "New", role: "viewer" },
  "members.setRole": { userId: EXTRA_MEMBER, role: "approver" },
  "members.resetPassword": { userId: EXTRA_MEMBER },
  "members.remove": { userId: EXTRA_MEMBER },
  "metrics.series": { range: "7d", bucket: "day", projectId: SHOP },
  "metrics.lag": {},
  "metrics.landing": { range: "7d", bucket: "day", projectId: SHOP },
  "metrics.checks": { range: "7d", bucket: "day", projectId: SHOP },
  "metrics.sandbox": { range: "7d", bucket: "day", projectId: SHOP },
  "sandbox.meter": {},
  "sandbox.setBudget": { monthlySeconds: 72_000 },
  "secrets.list": {},
  "secrets.set": { name: "PROBE_KEY", value: "sk-probe-value" },
  "secrets.delete": { name: "PROBE_KEY" },
  "policy.get": { projectId: SHOP },
  "policy.history": { projectId: SHOP, limit: 5 },
  // Every field of a policy document, with a command so its argv strings are probed too.
  "policy.update": {
    projectId: SHOP,
    expectedVersion: 1,
    document: {
      ...defaultPolicyDocument(loadConfig("dev")),
      commands: { build: ["npm", "run", "-s", "build"] },
      rerunBudget: 3,
    },
  },
  "notifications.list": { unreadOnly: false, limit: 10 },
  "notifications.unreadCount": {},
  "notifications.markRead": { notificationId: "ntf_probe" },
  "webhooks.list": { projectId: SHOP },
  "webhooks.create": {
    projectId: SHOP,
    url: "https://hooks.example.com/probe",
    eventTypes: ["approval.requested", "canonical.advanced"],
  },
  "webhooks.update": {
    webhookId: "whk_probe",
    url: "https://hooks.example.com/probe-moved",
    eventTypes: ["approval.requested", "canonical.advanced"],
    paused: true,
  },
  "webhooks.remove": { webhookId: "whk_probe_gone" },
  "webhooks.deliveries": { webhookId: "whk_probe", limit: 10 },
  "webhooks.redeliver": { deliveryId: "whd_probe" },
};

/** Paths in the input where a repository path goes. */
const isRepoPathAt = (path: Key[]) => {
  const last = path.at(-1);
  const parent = path.at(-2);
  return last === "path" || parent === "paths" || parent === "prefixes";
};

type Key = string | number;
type Kind = "nul" | "oversize" | "wrongType" | "absent" | "badPath" | "unknownId";
interface Breakage {
  kind: Kind;
  path: Key[];
  /** The new value; absent for `absent`. */
  value?: unknown;
}

/** The router's procedures by path, as far as this file reads them (their type and input schemas). */
const PROCEDURE_DEFS = appRouter._def.procedures as unknown as Record<
  string,
  { _def: { type: string; inputs?: unknown[] } }
>;
const PROCEDURES = Object.keys(PROCEDURE_DEFS);
const BAD_PATHS = [".git/hooks/pre-commit", "..\\..\\win", "C:/x", "/etc/passwd", "a/../../b", "a/.GIT/b", "a//b", "."];
/** Longer than any string an input takes (the largest, written content, is 512 KB), and under the 2 MB body limit. */
const OVERSIZED = "x".repeat(600 * 1024);

let adminToken = "";

beforeAll(async () => {
  await seedTenants(t.db);
  const { memberTokenId } = await seedProcedureRows(t.db, {
    tag: "probe",
    projectId: SHOP,
    changeId: CHANGE,
    changeSetId: CHANGESET,
    candidateId: CANDIDATE,
    tree: TREE,
    extraMember: EXTRA_MEMBER,
  });
  const now = new Date();
  (SAMPLES["tokens.revoke"] as { tokenId: string }).tokenId = memberTokenId;
  adminToken = (
    await createApiToken(t.db, { tenantId: ACME.tenantId, userId: "usr_acme_admin", name: "probe", role: "admin" }, now)
  ).secret;
});

/** The input a procedure gets: tenant procedures start with the tenant, `tenants.mine` takes none. */
function sampleFor(path: string): Record<string, unknown> | undefined {
  const sample = SAMPLES[path];
  if (!sample) return undefined;
  return path === "tenants.mine" ? sample : { tenantId: ACME.tenantId, ...structuredClone(sample) };
}

/** Every position in a JSON value with the value there (the root is `[]`). */
function positions(value: unknown, path: Key[] = []): { path: Key[]; value: unknown }[] {
  const here = [{ path, value }];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => positions(v, [...path, i]))];
  if (value && typeof value === "object") {
    return [...here, ...Object.entries(value).flatMap(([k, v]) => positions(v, [...path, k]))];
  }
  return here;
}

function apply(input: unknown, b: Breakage): unknown {
  if (b.path.length === 0) return b.kind === "absent" ? undefined : b.value;
  const copy = structuredClone(input);
  let node = copy as Record<Key, unknown>;
  for (const key of b.path.slice(0, -1)) node = node[key] as Record<Key, unknown>;
  const last = b.path.at(-1) as Key;
  if (b.kind === "absent") {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = b.value;
  return copy;
}

/** A value of another JSON type than `v` (never null: some fields are nullable). */
function otherType(v: unknown): fc.Arbitrary<unknown> {
  const all: [string, fc.Arbitrary<unknown>][] = [
    ["string", fc.string({ maxLength: 8 })],
    ["number", fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))],
    ["boolean", fc.boolean()],
    ["array", fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 })],
    ["object", fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 })],
  ];
  const type = Array.isArray(v) ? "array" : typeof v;
  return fc.oneof(...all.filter(([name]) => name !== type).map(([, arb]) => arb));
}

function takesInput(path: string): boolean {
  return (PROCEDURE_DEFS[path]?._def.inputs ?? []).length > 0;
}

/** Whether every input schema of the procedure accepts `input` (used only to pick fields that are required). */
function schemasAccept(path: string, input: unknown): boolean {
  return (PROCEDURE_DEFS[path]?._def.inputs ?? []).every((s) => (s as z.ZodType).safeParse(input).success);
}

/** The ways to break one procedure's sample, each a 4xx by construction (unknown IDs: a 4xx or a quiet answer). */
function breakages(path: string, sample: Record<string, unknown>): fc.Arbitrary<Breakage> {
  const all = positions(sample);
  const strings = all.filter((p) => typeof p.value === "string");
  const options: fc.Arbitrary<Breakage>[] = [
    fc
      .constantFrom(...all)
      .chain((p) => otherType(p.value).map((value) => ({ kind: "wrongType" as const, path: p.path, value }))),
  ];
  if (strings.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...strings), fc.nat(), fc.string({ maxLength: 4 })).map(([p, at, extra]) => {
        const s = p.value as string;
        const i = at % (s.length + 1);
        return { kind: "nul" as const, path: p.path, value: `${s.slice(0, i)}${extra}\u0000${s.slice(i)}` };
      }),
      fc.constantFrom(...strings).map((p) => ({ kind: "oversize" as const, path: p.path, value: OVERSIZED })),
    );
  }
  const required = all.filter(
    (p) => p.path.length > 0 && !schemasAccept(path, apply(sample, { kind: "absent", path: p.path })),
  );
  if (required.length > 0) {
    options.push(fc.constantFrom(...required).map((p) => ({ kind: "absent" as const, path: p.path })));
  }
  const repoPaths = strings.filter((p) => isRepoPathAt(p.path));
  if (repoPaths.length > 0) {
    options.push(
      fc
        .tuple(fc.constantFrom(...repoPaths), fc.constantFrom(...BAD_PATHS))
        .map(([p, value]) => ({ kind: "badPath" as const, path: p.path, value })),
    );
  }
  const ids = strings.filter((p) => ID_KEYS.has(String(p.path.at(-1))));
  if (ids.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...ids), fc.uuid()).map(([p, uuid]) => {
        const prefix = (p.value as string).split("_")[0];
        return { kind: "unknownId" as const, path: p.path, value: `${prefix}_${uuid}` };
      }),
    );
  }
  return fc.oneof(...options);
}

function requestFor(path: string, input: unknown): Request {
  const type = PROCEDURE_DEFS[path]?._def.type;
  const headers = { authorization: `Bearer ${adminToken}` };
  const envelope = JSON.stringify(input === undefined ? {} : { json: input });
  if (type === "mutation") {
    return new Request(`http://localhost/api/trpc/${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: envelope,
    });
  }
  return new Request(`http://localhost/api/trpc/${path}?input=${encodeURIComponent(envelope)}`, { headers });
}

interface ErrorShape {
  data: { code: string; httpStatus: number };
}

/** Status and tRPC code of the answer. */
async function callOverHttp(path: string, input: unknown): Promise<{ status: number; code: string | null }> {
  const res = await handleTrpcRequest(requestFor(path, input), { db: () => t.db, services: testServices });
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) return firstSseOutcome(res);
  const body = (await res.json()) as { error?: { json: ErrorShape } };
  return { status: res.status, code: body.error?.json.data.code ?? null };
}

/**
 * A subscription answers 200 and sends its outcome as events: a refused input is a
 * `serialized-error` event with the status it would have had. Reads up to the first event that is
 * not `connected` or a ping, then closes the stream.
 */
async function firstSseOutcome(res: Response): Promise<{ status: number; code: string | null }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 20_000;
  try {
    while (Date.now() < deadline) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const blocks = text.split("\n\n");
      text = blocks.pop() ?? "";
      for (const block of blocks) {
        const lines = block.split("\n");
        const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message";
        if (event === "connected" || event === "ping" || block.trim() === "") continue;
        if (event !== "serialized-error") return { status: res.status, code: null };
        const data = JSON.parse(lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "{}") as { json?: ErrorShape };
        return { status: data.json?.data.httpStatus ?? 500, code: data.json?.data.code ?? null };
      }
    }
    throw new Error("the subscription sent no outcome");
  } finally {
    await reader.cancel().catch(() => {});
  }
}

describe("every procedure under malformed input", () => {
  it("has a sample for every procedure of the app router, and none for others", () => {
    expect(PROCEDURES.filter((p) => !(p in SAMPLES))).toEqual([]);
    expect(Object.keys(SAMPLES).filter((p) => !PROCEDURES.includes(p))).toEqual([]);
  });

  it.each(PROCEDURES)(
    "%s answers a 4xx and writes nothing",
    async (path) => {
      const sample = sampleFor(path);
      if (!sample) throw new Error(`no sample for ${path}`);
      // Nothing may change, so one fingerprint taken before the runs is what every run must leave.
      const before = await tableFingerprint(t.db);
      // Besides the random runs: a NUL in every string field, each on its own (what the probe run found).
      const everyNul = positions(sample)
        .filter((p) => typeof p.value === "string")
        .map((p): [Breakage] => [{ kind: "nul", path: p.path, value: `${p.value}\u0000` }]);
      await fc.assert(
        fc.asyncProperty(breakages(path, sample), async (b) => {
          const input = apply(sample, b);
          const { status, code } = await callOverHttp(path, input);
          const shown = `${path} with ${b.kind} at ${JSON.stringify(b.path)}: HTTP ${status} ${code}`;
          expect(status, shown).toBeLessThan(500);
          // An unknown ID may be refused (403, 404) or find nothing (200); a procedure without input ignores it.
          if (b.kind === "unknownId" || !takesInput(path)) expect(status === 200 || status >= 400, shown).toBe(true);
          else expect([status, code], shown).toEqual([400, "BAD_REQUEST"]);
          expect(await tableFingerprint(t.db), `${shown} changed the database`).toEqual(before);
        }),
        { numRuns: 6, examples: everyNul },
      );
    },
    120_000,
  );
});
