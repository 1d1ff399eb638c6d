import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { Role } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "./testing/api-server.ts";
import { run, start, userEnv } from "./testing/processes.ts";
import { composedCandidate, SHOP, seedCandidate, seedWithTokens } from "./testing/seed.ts";

// The package as someone outside this repository gets it (docs/cli.md, Using the SDK in another project):
// `npm pack` (whose prepack builds dist/ with tsup), the tarball installed in an empty folder of its
// own, then the CLI, an import, the types and the README's two samples, as written, in that folder.
// The dependencies come from the registry (the npm cache when it has them), as a user's would.
const t = useTestDatabase();
const PKG = fileURLToPath(new URL("..", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const TSX = join(REPO, "node_modules/tsx/dist/cli.mjs");
const SAMPLE_CANDIDATE = "cand_000000000000000000000000000000e1";
let server: ApiServer;
let tokens: Record<Role, string>;
let work: string;
let consumer: string;
let tarball: string;

beforeAll(async () => {
  tokens = await seedWithTokens(t.db);
  await seedCandidate(t.db, {
    changeId: "chg_pack_listed",
    candidateId: "cand_000000000000000000000000000000e0",
    status: "created",
  });
  server = await startApiServer(t.db);
  work = await mkdtemp(join(tmpdir(), "rbt-pack-"));
  const packed = await run(["npm", "pack", "--pack-destination", work], { cwd: PKG, limitMs: 900_000 });
  expect(packed.code, `npm pack failed:\n${packed.stdout}${packed.stderr}`).toBe(0);
  const [name, ...more] = (await readdir(work)).filter((f) => f.endsWith(".tgz"));
  expect(more).toEqual([]);
  tarball = join(work, name as string);
  consumer = join(work, "consumer");
  await mkdir(consumer);
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const installed = await run(
    ["npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball],
    { cwd: consumer, limitMs: 600_000 },
  );
  expect(installed.code, `npm install of the tarball failed:\n${installed.stdout}${installed.stderr}`).toBe(0);
}, 1_200_000);
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The code block of docs/cli.md (moved there from the README) whose fence names `file` (```js projects.js). */
async function readmeSample(file: string): Promise<string> {
  const readme = await readFile(join(REPO, "docs/cli.md"), "utf8");
  const block = readme.match(new RegExp(`\`\`\`[a-z]+ ${file.replace(".", "\\.")}\\n([\\s\\S]*?)\\n\`\`\`\\n`));
  expect(block, `docs/cli.md has no code block for ${file}`).not.toBeNull();
  return `${block?.[1]}\n`;
}

const api = (role: Role, extra: Record<string, string> = {}) =>
  userEnv({ RHUMBATRON_URL: server.url, RHUMBATRON_TOKEN: tokens[role], ...extra });

describe("the packed @rhumbatron/sdk", () => {
  it("holds the build, its types and the bin, and nothing of the source", async () => {
    const files = tarEntries(await readFile(tarball));
    for (const f of ["package.json", "bin/rhumbatron.js", "dist/index.js", "dist/index.d.ts", "dist/cli.js"]) {
      expect(files).toContain(f);
    }
    for (const f of files) expect(f).toMatch(/^(package\.json|bin\/rhumbatron\.js|dist\/[\w-]+\.(js|d\.ts))$/);
    const pkg = JSON.parse(await readFile(join(consumer, "node_modules/@rhumbatron/sdk/package.json"), "utf8"));
    const targets = [pkg.main, pkg.types, pkg.bin.rhumbatron, ...Object.values(pkg.exports["."])] as string[];
    for (const target of targets) expect(files).toContain(target.replace(/^\.\//, ""));
    // Workspace packages are bundled in, never installed; tsx is not a dependency.
    expect(Object.keys(pkg.dependencies).sort()).toEqual([
      "@trpc/client",
      "@trpc/server",
      "commander",
      "picomatch",
      "superjson",
      "yaml",
      "zod",
    ]);
    expect(await readdir(join(consumer, "node_modules/@rhumbatron"))).toEqual(["sdk"]);
    expect((await stat(tarball)).size).toBeGreaterThan(0);
  });

  it("runs `npx rhumbatron --help` with plain Node: no source, no tsx", async () => {
    expect(existsSync(join(consumer, "node_modules/@rhumbatron/sdk/src"))).toBe(false);
    expect(existsSync(join(consumer, "node_modules/tsx"))).toBe(false);
    const r = await run(["npx", "--no-install", "rhumbatron", "--help"], { cwd: consumer });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: rhumbatron [options] [command]");
    expect(r.stdout).toContain("5 server unreachable");
  });

  it("imports as an ES module from its build (and through require on Node 20.19+)", async () => {
    await writeFile(
      join(consumer, "imports.js"),
      [
        'import { createRhumbatronClient, RhumbatronError, TRPC_PATH } from "@rhumbatron/sdk";',
        'const rbt = createRhumbatronClient({ url: "http://127.0.0.1:9" });',
        "console.log(JSON.stringify({",
        '  from: import.meta.resolve("@rhumbatron/sdk"),',
        "  helper: typeof rbt.listProjects,",
        "  raw: typeof rbt.trpc.change.get.query,",
        '  error: new RhumbatronError("NOT_FOUND", "x").code,',
        "  path: TRPC_PATH,",
        "}));",
      ].join("\n"),
    );
    const r = await run([process.execPath, "imports.js"], { cwd: consumer });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({
      from: `file://${join(consumer, "node_modules/@rhumbatron/sdk/dist/index.js")}`,
      helper: "function",
      raw: "function",
      error: "NOT_FOUND",
      path: "/api/trpc",
    });
    const cjs = await run(
      [process.execPath, "-e", 'console.log(typeof require("@rhumbatron/sdk").createRhumbatronClient)'],
      {
        cwd: consumer,
      },
    );
    expect(cjs.stdout.trim()).toBe("function");
  });

  it("type-checks a strict consumer and the README's change.ts against the bundled declarations", async () => {
    await writeFile(join(consumer, "change.ts"), await readmeSample("change.ts"));
    await writeFile(join(consumer, "consumer.ts"), CONSUMER_TS);
    const options = {
      strict: true,
      target: "es2022",
      module: "nodenext",
      lib: ["es2023"],
      noEmit: true,
      typeRoots: [join(REPO, "node_modules/@types")],
      types: ["node"],
    };
    const config = (skipLibCheck: boolean) =>
      JSON.stringify({ compilerOptions: { ...options, skipLibCheck }, files: ["consumer.ts", "change.ts"] });
    // As most projects check (skipLibCheck): the consumer's code compiles, and the wrong uses do not.
    await writeFile(join(consumer, "tsconfig.json"), config(true));
    const r = await run([process.execPath, TSC, "-p", "tsconfig.json"], { cwd: consumer });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.code).toBe(0);
    // Checking the declarations too: nothing in the SDK's names a type it does not ship. (tRPC's own
    // declarations name `ws`, which a consumer without @types/ws lacks; that is theirs, not ours.)
    await writeFile(join(consumer, "tsconfig.strict-libs.json"), config(false));
    const libs = await run([process.execPath, TSC, "-p", "tsconfig.strict-libs.json"], { cwd: consumer });
    const ours = libs.stdout.split("\n").filter((l) => /error TS/.test(l) && !l.startsWith("node_modules/@trpc/"));
    expect(ours).toEqual([]);
  });

  it("runs the README's projects.js as written: the token's tenant, through the raw client too", async () => {
    await writeFile(join(consumer, "projects.js"), await readmeSample("projects.js"));
    const r = await run([process.execPath, "projects.js"], { cwd: consumer, env: api("viewer") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("tenant acme as viewer");
    const shop = lines.indexOf(`${SHOP}  shop`);
    expect(shop).toBeGreaterThan(0);
    expect(lines[shop + 1]).toBe("  chg_pack_listed  open  Change chg_pack_listed");
  });

  it("runs the README's change.ts with tsx as written: asks, follows, approves the tree and promotes", async () => {
    await writeFile(join(consumer, "change.ts"), await readmeSample("change.ts"));
    const sample = start([process.execPath, TSX, "change.ts"], {
      cwd: consumer,
      env: api("approver", { RHUMBATRON_PROJECT: SHOP }),
    });
    await sample.waitFor("task hello: pending");
    // The worker's part, done here: the Task completes and a verified Candidate is composed.
    const change = await t.db.change.findUniqueOrThrow({
      where: { projectId_clientRequestId: { projectId: SHOP, clientRequestId: "sdk-sample-hello" } },
      include: { tasks: true },
    });
    const task = change.tasks[0];
    if (!task) throw new Error("the sample's Change has no Task");
    const candidate = composedCandidate(t.db, {
      changeId: change.id,
      taskId: task.id,
      candidateId: SAMPLE_CANDIDATE,
      status: "verified",
    });
    await t.db.$transaction([
      t.db.task.update({ where: { id: task.id }, data: { state: "completed" } }),
      t.db.change.update({ where: { id: change.id }, data: { status: "verifying" } }),
      ...candidate.rows,
    ]);
    const r = await sample.done;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe(`${change.id}: created`);
    expect(lines).toContain("  candidate: verified");
    // No fork on this machine holds the composed commit, so promotion names that block.
    expect(lines.slice(-2)).toEqual([
      `${change.id}: verified`,
      "blocked: the composed commit is not in the Candidate fork",
    ]);
    expect(await t.db.approval.findUnique({ where: { candidateId: SAMPLE_CANDIDATE } })).toMatchObject({
      decision: "granted",
      treeHash: candidate.tree,
      decidedBy: "usr_acme_approver",
      note: "looks right",
    });
  });
});

/** The paths in a package tarball (a gzipped ustar archive, entries under package/). */
function tarEntries(gz: Buffer): string[] {
  const tar = gunzipSync(gz);
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, length: number) =>
      header
        .subarray(from, from + length)
        .toString("utf8")
        .replace(/\0[\s\S]*$/, "");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join("/");
    if (field(156, 1) === "0" || field(156, 1) === "") names.push(name.replace(/^package\//, ""));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names.sort();
}

/** A consumer's code: it compiles only if the types are the real ones (an `any` leaves a directive unused). */
const CONSUMER_TS = `import {
  type CandidateDetail,
  type ChangeDraft,
  createRhumbatronClient,
  type Project,
  type PromoteResult,
  RhumbatronError,
} from "@rhumbatron/sdk";

const rbt = createRhumbatronClient({ url: "http://127.0.0.1:3000", token: "rbt_x" });
const projects: Project[] = await rbt.listProjects();
const name: string | undefined = projects[0]?.name;
const candidate: CandidateDetail = await rbt.getCandidate("cand_x");
const tree: string | null = candidate.composedTree;
const promoted: PromoteResult = await rbt.promote(candidate.id);
if (promoted.outcome === "blocked") promoted.blocks satisfies string[];
// The raw client: every procedure, without the tenant the token implies.
const changes = await rbt.trpc.change.list.query({ projectId: "proj_x", limit: 3 });
const status: string | undefined = changes[0]?.status;
const draft: ChangeDraft = { title: "t", riskTier: "low", tasks: [{ key: "a", title: "a" }] };
console.log(name, tree, status, draft, RhumbatronError.name);

// @ts-expect-error a project's ID is required
await rbt.trpc.change.list.query({ limit: 3 });
// @ts-expect-error listProjects gives projects, not names
const names: string[] = await rbt.listProjects();
// @ts-expect-error there is no such procedure
await rbt.trpc.change.nothing.query();
// @ts-expect-error a risk tier is one of four words
const bad: ChangeDraft = { title: "t", riskTier: "huge", tasks: [] };
console.log(names, bad);
`;
