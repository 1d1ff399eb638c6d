import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { SandboxWorkspace } from "@rhumbatron/core";
import {
  type ScriptedTurn,
  type StandInServer,
  startAnthropicStandIn,
  startResponsesStandIn,
} from "@rhumbatron/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BubblewrapSandbox, bubblewrapAvailable, bubblewrapSandbox } from "../../sandbox/bubblewrap.ts";
import { type RegistryProxy, startRegistryProxy } from "../../sandbox/registry-proxy.ts";
import {
  defaultProgramsDir,
  findProgram,
  type InstalledProgram,
  installProgram,
  PINNED,
  programVersions,
} from "./install.ts";
import { CLAUDE_CODE_QUIET_ENV, CODEX_QUIET_CONFIG, PRESETS, type ProgramRun } from "./presets.ts";
import type { TranscriptStep } from "./transcript.ts";

// The real coding-agent programs, installed from the npm registry into the machine-level folder
// (install.ts: ~/.cache/rhumbatron/agent-programs, so the suite downloads them once per machine),
// each run inside the bubblewrap Sandbox on a small git project. The model is a stand-in speaking
// the program's wire format (packages/fixtures/src/*-stand-in.ts) on the host's 127.0.0.1; the
// Sandbox has no network, and reaches it only through the filtering proxy (registry-proxy.ts)
// allowing that one host:port, by a name only the proxy resolves. Command-line git is the oracle
// for what changed. Nothing sleeps: every step waits for a process or a request.

const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000a9";
/** A name that resolves nowhere but in the proxy: the program can reach the stand-in only through it. */
const MODEL_HOST = "model-stand-in.internal";
const T = 600_000;
const SECRET = `sk-planted-${randomUUID()}`;

let root: string;
let sandbox: BubblewrapSandbox;
const installed: Partial<Record<string, InstalledProgram>> = {};
const figures: Record<string, unknown> = {};

const FILES: Record<string, string> = {
  "NOTES.md": "# Notes\nThe greeting must end with an exclamation mark.\n",
  "greet.mjs": 'export function greet(name) {\n  return "Hello, " + name;\n}\n',
  "greet.test.mjs":
    'import assert from "node:assert";\nimport { test } from "node:test";\nimport { greet } from "./greet.mjs";\n\ntest("greets with an exclamation mark", () => assert.equal(greet("Ada"), "Hello, Ada!"));\n',
};
const EXPECTED_DIFF_LINE = '+  return "Hello, " + name + "!";';
const FINAL = "Done: the greeting now ends with an exclamation mark and the test passes.";

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
  });
}

async function project(dirName: string): Promise<SandboxWorkspace> {
  const ws = await sandbox.open({ projectId: PROJECT, dirName });
  for (const [name, text] of Object.entries(FILES)) await writeFile(join(ws.path, name), text);
  git(ws.path, "init", "-q", "-b", "main");
  git(ws.path, "add", "-A");
  git(ws.path, "commit", "-qm", "start");
  return ws;
}

/** Every file under `dir` (the .git folder included) holding `text`. */
function filesContaining(dir: string, text: string): string[] {
  try {
    return execFileSync("grep", ["-rlF", "--", text, dir], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok) throw new Error(`bubblewrap cannot run here (${probe.reason})`);
  for (const name of ["claude-code", "codex", "node"] as const) {
    // Installed by `npm test`'s setup step (scripts/lib/agent-programs.ts), never by a test: no test
    // reaches the internet. Not there: the test fails saying how to get them, it is never skipped.
    const p = await findProgram(name);
    if (!p) {
      throw new Error(
        `${PINNED[name].package}@${PINNED[name].version} is not installed in ${defaultProgramsDir()}: npm test's setup step installs the agent programs (npm run setup -- --agent-programs does it alone)`,
      );
    }
    installed[name] = p;
    figures[`install ${name}`] = { installedNow: p.installedNow, ms: p.durationMs, mb: Math.round(p.bytes / 1e6) };
  }
  root = await mkdtemp(join(tmpdir(), "rhumbatron-programs-"));
  sandbox = await bubblewrapSandbox({
    root: join(root, "sandboxes"),
    toolchainPaths: [
      installed["claude-code"]?.toolchainPath ?? "",
      installed.codex?.toolchainPath ?? "",
      dirname(process.execPath),
    ],
    // The programs are multi-threaded (each thread counts against the pids cap) and Claude Code's
    // first event lists its whole configuration.
    limits: { maxOutputBytes: 16 * 1024 * 1024, maxProcesses: 1024 },
  });
}, T);

afterAll(async () => {
  console.log(`agent programs figures: ${JSON.stringify(figures, null, 1)}`);
  if (root) await rm(root, { recursive: true, force: true });
});

async function runInSandbox(opts: {
  program: "claude-code" | "codex";
  dirName: string;
  server: StandInServer;
  model: string;
  /** Changes the preset's command before it runs (the test of the quieting switches). */
  adjust?: (run: ProgramRun) => ProgramRun;
}) {
  const proxy: RegistryProxy = await startRegistryProxy({
    socketPath: join(root, `${opts.dirName}.sock`),
    allow: [`${MODEL_HOST}:${opts.server.port}`],
    resolve: async (host) => {
      if (host === MODEL_HOST) return "127.0.0.1";
      throw new Error(`no such host ${host}`);
    },
  });
  try {
    const ws = await project(opts.dirName);
    const preset = PRESETS[opts.program];
    const built = preset.build({
      prompt: "Read NOTES.md, make greet() follow it, and run the tests with node --test.",
      model: opts.model,
      baseUrl: `http://${MODEL_HOST}:${opts.server.port}`,
      apiKey: SECRET,
    });
    const run = opts.adjust ? opts.adjust(built) : built;
    const started = Date.now();
    const result = await ws.run({
      argv: run.argv,
      env: run.env,
      allow: [installed[opts.program]?.command ?? ""],
      network: { proxySocket: proxy.socketPath },
      timeoutMs: 300_000,
      stdin: "",
    });
    figures[`run ${opts.program}`] = { ms: Date.now() - started, exitCode: result.exitCode };
    const steps = preset.parse(result.stdout);
    return { ws, result, steps, visits: proxy.seen() };
  } finally {
    await proxy.stop();
  }
}

function expectNoSecret(ws: SandboxWorkspace, texts: string[]) {
  for (const t of texts) expect(t.includes(SECRET)).toBe(false);
  expect(filesContaining(ws.path, SECRET)).toEqual([]);
}

/** RHUMBATRON_AGENT_PROGRAMS_RECORD=<dir>: keeps each program's stdout there (how recorded/ was made). */
async function keep(name: string, stdout: string) {
  const dir = process.env.RHUMBATRON_AGENT_PROGRAMS_RECORD;
  if (dir) await writeFile(join(dir, `${name}.jsonl`), stdout);
}

function kinds(steps: TranscriptStep[]) {
  return steps.map((s) => s.kind);
}

describe("coding-agent programs in the Sandbox against stand-in models", () => {
  it("programVersions reports the installed programs and their --version", async () => {
    const versions = await programVersions();
    const byName = Object.fromEntries(versions.map((v) => [v.name, v]));
    expect(byName["claude-code"]?.reported).toBe("2.1.332 (Claude Code)");
    expect(byName.codex?.reported).toBe("codex-cli 0.171.0");
    expect(byName.node?.reported).toBe("v24.22.3");
    // A second install finds the first.
    const again = await installProgram("codex");
    expect(again.installedNow).toBe(false);
    figures["install codex (cached)"] = { ms: again.durationMs };
  });

  it("the installed Node 24 runs in the Sandbox as a read-only toolchain mount, first on PATH", async () => {
    const node = installed.node as InstalledProgram;
    const withNode24 = await bubblewrapSandbox({
      root: join(root, "sandboxes"),
      toolchainPaths: [node.toolchainPath],
      limits: { maxOutputBytes: 1024 * 1024, maxProcesses: 256 },
    });
    const ws = await withNode24.open({ projectId: PROJECT, dirName: "cand-node24" });
    const r = await ws.run({ argv: ["node", "-p", "process.version + ' ' + process.execPath"], timeoutMs: 60_000 });
    expect(r.stdout.trim()).toBe(`v24.22.3 ${node.executable}`);
  });

  it(
    "Claude Code reads, edits, runs the test and answers, through the proxy only",
    async () => {
      const ws0 = `/workspace/cand-claude`;
      const script: ScriptedTurn[] = [
        // Claude Code refuses to edit a file it has not read (recorded/claude-code-edit-refused.jsonl).
        { toolCalls: [{ name: "Read", input: { file_path: `${ws0}/greet.mjs` } }] },
        {
          toolCalls: [
            {
              name: "Edit",
              input: {
                file_path: `${ws0}/greet.mjs`,
                old_string: '"Hello, " + name;',
                new_string: '"Hello, " + name + "!";',
              },
            },
          ],
        },
        { toolCalls: [{ name: "Bash", input: { command: "node --test", description: "Run the tests" } }] },
        { text: FINAL, usage: { inputTokens: 300, outputTokens: 40 } },
      ];
      const server = await startAnthropicStandIn({ script });
      try {
        const { ws, result, steps, visits } = await runInSandbox({
          program: "claude-code",
          dirName: "cand-claude",
          server,
          model: "claude-sonnet-4-5",
        });
        await keep("claude-code", result.stdout);
        const requests = server.requests();
        expect(
          requests.map((r) => `${r.method} ${r.path} ${r.turn}`),
          result.stderr,
        ).toEqual([
          "POST /v1/messages?beta=true 0",
          "POST /v1/messages?beta=true 1",
          "POST /v1/messages?beta=true 2",
          "POST /v1/messages?beta=true 3",
        ]);
        const tools = ((requests[0]?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map(
          (t) => t.name,
        );
        figures["claude-code tools"] = tools;
        expect(tools).toEqual(expect.arrayContaining(["Read", "Edit", "Write", "Bash"]));
        expect(server.credentials().every((c) => c === SECRET)).toBe(true);
        // The proxy let through only the stand-in and refused nothing.
        expect(visits).toEqual(visits.map(() => ({ host: MODEL_HOST, port: server.port, allowed: true })));
        figures["claude-code proxy"] = visits.length;

        expect(git(ws.path, "diff")).toContain(EXPECTED_DIFF_LINE);
        expect(git(ws.path, "status", "--porcelain")).toBe(" M greet.mjs\n");
        expect(await readFile(join(ws.path, "greet.mjs"), "utf8")).toContain('name + "!"');

        expect(steps.filter((s) => s.kind === "tool_call").map((s) => (s as { name: string }).name)).toEqual([
          "Read",
          "Edit",
          "Bash",
        ]);
        expect(steps).toContainEqual(expect.objectContaining({ kind: "file_edit", path: `${ws0}/greet.mjs` }));
        const command = steps.find((s) => s.kind === "command");
        expect(command).toMatchObject({ kind: "command", text: "node --test", exitCode: 0 });
        expect((command as { output?: string }).output).toContain("# pass 1");
        expect(steps).toContainEqual(expect.objectContaining({ kind: "message", role: "assistant", text: FINAL }));
        const usage = steps.find((s) => s.kind === "usage");
        expect(usage).toMatchObject({ kind: "usage", outputTokens: expect.any(Number) });
        expect((usage as { inputTokens: number }).inputTokens).toBeGreaterThan(0);
        expect(kinds(steps)).not.toContain("error");
        expect(steps.every((s) => s.kind === "usage" || typeof s.at === "string")).toBe(true);
        expectNoSecret(ws, [result.stdout, result.stderr, JSON.stringify(steps)]);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it(
    "Codex reads, patches, runs the test and answers, through the proxy only",
    async () => {
      const script: ScriptedTurn[] = [
        { toolCalls: [{ name: "exec_command", input: { cmd: "cat NOTES.md" } }] },
        {
          toolCalls: [
            {
              name: "apply_patch",
              input:
                '*** Begin Patch\n*** Update File: greet.mjs\n@@\n-  return "Hello, " + name;\n+  return "Hello, " + name + "!";\n*** End Patch\n',
            },
          ],
        },
        { toolCalls: [{ name: "exec_command", input: { cmd: "node --test" } }] },
        { text: FINAL, usage: { inputTokens: 300, outputTokens: 40 } },
      ];
      const server = await startResponsesStandIn({ script });
      try {
        const { ws, result, steps, visits } = await runInSandbox({
          program: "codex",
          dirName: "cand-codex",
          server,
          model: "gpt-5.5",
        });
        await keep("codex", result.stdout);
        const requests = server.requests();
        expect(
          requests.map((r) => `${r.method} ${r.path} ${r.turn}`),
          result.stderr,
        ).toEqual(["POST /v1/responses 0", "POST /v1/responses 1", "POST /v1/responses 2", "POST /v1/responses 3"]);
        const tools = (
          (requests[0]?.body as { tools?: { name?: string; type: string }[] } | undefined)?.tools ?? []
        ).map((t) => t.name ?? t.type);
        figures["codex tools"] = tools;
        expect(tools).toEqual(expect.arrayContaining(["exec_command", "apply_patch"]));
        expect(server.credentials()).toEqual(requests.map(() => `Bearer ${SECRET}`));
        expect(visits).toEqual(visits.map(() => ({ host: MODEL_HOST, port: server.port, allowed: true })));
        figures["codex proxy"] = visits.length;

        expect(git(ws.path, "diff")).toContain(EXPECTED_DIFF_LINE);
        expect(git(ws.path, "status", "--porcelain")).toBe(" M greet.mjs\n");

        const commands = steps.filter((s) => s.kind === "command") as {
          text: string;
          exitCode: number | null;
          output?: string;
        }[];
        expect(commands.map((c) => [c.text.includes("cat NOTES.md"), c.exitCode])).toEqual([
          [true, 0],
          [false, 0],
        ]);
        expect(commands[0]?.output).toContain("exclamation mark");
        expect(commands[1]?.text).toContain("node --test");
        expect(commands[1]?.output).toContain("# pass 1");
        expect(steps).toContainEqual(
          expect.objectContaining({ kind: "file_edit", path: `/workspace/cand-codex/greet.mjs` }),
        );
        expect(steps).toContainEqual(expect.objectContaining({ kind: "message", role: "assistant", text: FINAL }));
        expect(steps).toContainEqual(expect.objectContaining({ kind: "usage", outputTokens: expect.any(Number) }));
        expect(kinds(steps)).not.toContain("error");
        expectNoSecret(ws, [result.stdout, result.stderr, JSON.stringify(steps)]);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it(
    "without the quieting switches each program also tries outside hosts, which the proxy refuses, and still works",
    async () => {
      const tried: Record<string, string[]> = {};
      for (const program of ["claude-code", "codex"] as const) {
        const server =
          program === "codex"
            ? await startResponsesStandIn({ script: [{ text: FINAL }] })
            : await startAnthropicStandIn({ script: [{ text: FINAL }] });
        try {
          const { steps, visits } = await runInSandbox({
            program,
            dirName: `cand-loud-${program}`,
            server,
            model: program === "codex" ? "gpt-5.5" : "claude-sonnet-4-5",
            adjust: (run) => ({
              argv: run.argv.filter(
                (a, i, all) =>
                  !CODEX_QUIET_CONFIG.includes(a) && !(a === "-c" && CODEX_QUIET_CONFIG.includes(all[i + 1] ?? "")),
              ),
              env: Object.fromEntries(Object.entries(run.env).filter(([k]) => !(k in CLAUDE_CODE_QUIET_ENV))),
            }),
          });
          expect(server.requests()).toHaveLength(1);
          expect(steps).toContainEqual(expect.objectContaining({ kind: "message", text: FINAL }));
          for (const v of visits.filter((v) => v.allowed))
            expect(v).toEqual({ host: MODEL_HOST, port: server.port, allowed: true });
          const refused = [...new Set(visits.filter((v) => !v.allowed).map((v) => `${v.host}:${v.port}`))].sort();
          tried[program] = refused;
        } finally {
          await server.stop();
        }
      }
      figures["tried without the quieting switches (refused)"] = tried;
      expect(tried["claude-code"]).toContain("api.anthropic.com:443");
      expect(tried.codex).toContain("ab.chatgpt.com:443");
    },
    T,
  );
});
