import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type AgentChoice, type AgentProgramName, dirForAgentRun } from "@rhumbatron/core";
import { setProjectAgent, setTenantSecret } from "@rhumbatron/db";
import { dumpAllRows, useTestDatabase } from "@rhumbatron/db/testing";
import {
  type ScriptedTurn,
  startAnthropicStandIn,
  startGeminiStandIn,
  startResponsesStandIn,
} from "@rhumbatron/fixtures";
import { beforeAll, describe, expect, it } from "vitest";
import { createScriptedChange, importedProject, runTaskDirectly, type TestWorld, testWorld } from "../test-world.ts";
import { defaultProgramsDir, type InstalledProgram, installedAgentPrograms, PINNED } from "./programs/install.ts";
import type { TranscriptStep } from "./programs/transcript.ts";

/**
 * A program Agent (agents/program-agent.ts) through the real runner: Claude Code, Codex, Gemini CLI
 * and OpenCode, as
 * installed by npm test's setup step, run in the bubblewrap Sandbox on an imported project against
 * a stand-in model server speaking each one's wire format (packages/fixtures), reached only through
 * the run's proxy. Command-line git reads what was published; the planted key is looked for in
 * every log line, the transcript, every database row and the published tree.
 */
const t = useTestDatabase();
const T = 600_000;
const AUTH = `auth-${randomUUID()}`;
const SECRET = `sk-planted-${randomUUID()}`;

const FILES = {
  "NOTES.md": "# Notes\nThe greeting must end with an exclamation mark.\n",
  "greet.mjs": 'export function greet(name) {\n  return "Hello, " + name;\n}\n',
  "greet.test.mjs":
    'import assert from "node:assert";\nimport { test } from "node:test";\nimport { greet } from "./greet.mjs";\n\ntest("greets with an exclamation mark", () => assert.equal(greet("Ada"), "Hello, Ada!"));\n',
  ".rhumbatron/checks.yml": "version: 1\nchecks:\n  - id: test\n    run: [node, --test]\n",
};
const FINAL = "Done: the greeting ends with an exclamation mark and the test passes.";

let programs: Map<AgentProgramName, InstalledProgram>;

beforeAll(async () => {
  programs = await installedAgentPrograms();
  for (const name of ["claude-code", "codex", "gemini-cli", "opencode"] as const) {
    // Installed by npm test's setup step, never by a test; missing, the test fails saying how to get it.
    if (!programs.has(name)) {
      throw new Error(
        `${PINNED[name].package}@${PINNED[name].version} is not installed in ${defaultProgramsDir()}: npm run setup -- --agent-programs installs it`,
      );
    }
  }
});

async function world(): Promise<TestWorld> {
  return testWorld(t.db, undefined, { extraToolchain: [...programs.values()].map((p) => p.toolchainPath) });
}

async function project(w: TestWorld, agent: AgentChoice): Promise<string> {
  const projectId = await importedProject(w, FILES);
  await setProjectAgent(t.db, { tenantId: "ten_a", projectId, agent });
  await plantKey();
  return projectId;
}

async function plantKey(): Promise<void> {
  await setTenantSecret(
    t.db,
    { tenantId: "ten_a", name: "MODEL_KEY", value: SECRET, userId: "usr_admin" },
    { authSecret: AUTH, now: new Date() },
  );
}

async function runTask(w: TestWorld, projectId: string, runId: string) {
  const changeId = await createScriptedChange(w, projectId, {
    requestId: `req-${runId}`,
    title: "Make the greeting follow the notes",
    tasks: [{ key: "greet", paths: ["greet.mjs"], editPlan: [] }],
  });
  const task = await w.db.task.findFirstOrThrow({ where: { changeId } });
  const { result } = await runTaskDirectly(w, task, { agentPrograms: programs, credentialSecret: AUTH }, runId);
  return {
    result,
    changeSets: await w.db.changeSet.findMany({ where: { changeId } }),
    run: await w.db.agentRun.findUniqueOrThrow({ where: { id: runId } }),
    task: await w.db.task.findUniqueOrThrow({ where: { id: task.id } }),
  };
}

const gitShow = (w: TestWorld, fork: string, object: string) =>
  execFileSync("git", ["--git-dir", join(w.root, fork), "show", object], { encoding: "utf8" });

async function transcriptOf(w: TestWorld, run: { transcript: unknown }): Promise<TranscriptStep[]> {
  const key = (run.transcript as { key: string }).key;
  const blob = await w.blobs.get(key);
  if (!blob) throw new Error(`no transcript at ${key}`);
  return JSON.parse(new TextDecoder().decode(blob.body)) as TranscriptStep[];
}

/** The planted key is in no log line, no database row, no transcript and no file of the fork. */
async function expectKeyNowhere(w: TestWorld, fork: string | null, steps: TranscriptStep[]) {
  expect(JSON.stringify(w.logs.lines)).not.toContain(SECRET);
  expect(JSON.stringify(steps)).not.toContain(SECRET);
  expect(await dumpAllRows(t.db)).not.toContain(SECRET);
  if (fork) expect(gitGrep(w, fork, SECRET)).toBe("");
}

/** Files on the fork's main holding `text` (git grep exits 1 when none does). */
function gitGrep(w: TestWorld, fork: string, text: string): string {
  try {
    return execFileSync("git", ["--git-dir", join(w.root, fork), "grep", "-l", "-F", text, "main", "--"], {
      encoding: "utf8",
    });
  } catch (err) {
    if ((err as { status?: number }).status === 1) return "";
    throw err;
  }
}

describe("a program Agent", () => {
  it(
    "Claude Code reads, edits and runs the test through the real runner; its transcript is kept, it reached only the model, and its key is nowhere",
    async () => {
      const runId = `run_${randomUUID()}`;
      const inside = `/workspace/${dirForAgentRun(runId)}`;
      const script: ScriptedTurn[] = [
        { toolCalls: [{ name: "Read", input: { file_path: `${inside}/greet.mjs` } }] },
        {
          toolCalls: [
            {
              name: "Edit",
              input: {
                file_path: `${inside}/greet.mjs`,
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
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "claude-code",
          model: "claude-sonnet-4-5",
          endpoint: `http://127.0.0.1:${server.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, runId);
        expect(result, JSON.stringify(server.requests().map((r) => r.path))).toMatchObject({
          outcome: "completed",
          detail: `claude-code exited 0: ${FINAL}`,
        });
        expect(server.credentials().every((c) => c === SECRET)).toBe(true);
        expect(server.requests()).toHaveLength(4);
        const cs = changeSets[0];
        expect(changeSets).toHaveLength(1);
        expect(cs?.paths).toEqual(["greet.mjs"]);
        expect(gitShow(w, cs?.fork ?? "", `${cs?.commit}:greet.mjs`)).toContain('return "Hello, " + name + "!";');

        expect(run.transcript).toMatchObject({
          program: "claude-code",
          version: PINNED["claude-code"].version,
          reached: [`127.0.0.1:${server.port}`],
          refused: [],
        });
        const steps = await transcriptOf(w, run);
        expect(steps.filter((s) => s.kind === "tool_call").map((s) => (s as { name: string }).name)).toEqual([
          "Read",
          "Edit",
          "Bash",
        ]);
        expect(steps).toContainEqual(expect.objectContaining({ kind: "command", text: "node --test", exitCode: 0 }));
        expect(steps).toContainEqual(expect.objectContaining({ kind: "file_edit", path: `${inside}/greet.mjs` }));
        expect(steps).toContainEqual(expect.objectContaining({ kind: "message", text: FINAL }));
        expect((run.transcript as { outputTokens: number }).outputTokens).toBeGreaterThan(0);
        await expectKeyNowhere(w, cs?.fork ?? null, steps);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it(
    "Codex patches and runs the test through the real runner; a run that writes its key into the tree is refused and publishes nothing",
    async () => {
      const ok = `run_${randomUUID()}`;
      const patch = (line: string) =>
        `*** Begin Patch\n*** Update File: greet.mjs\n@@\n-  return "Hello, " + name;\n+  ${line}\n*** End Patch\n`;
      const server = await startResponsesStandIn({
        script: [
          { toolCalls: [{ name: "exec_command", input: { cmd: "cat NOTES.md" } }] },
          { toolCalls: [{ name: "apply_patch", input: patch('return "Hello, " + name + "!";') }] },
          { toolCalls: [{ name: "exec_command", input: { cmd: "node --test" } }] },
          { text: FINAL, usage: { inputTokens: 300, outputTokens: 40 } },
        ],
      });
      try {
        const w = await world();
        const agent: AgentChoice = {
          kind: "program",
          program: "codex",
          model: "gpt-5.5",
          endpoint: `http://127.0.0.1:${server.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          allowOutsidePaths: false,
        };
        const projectId = await project(w, agent);
        const { result, changeSets, run } = await runTask(w, projectId, ok);
        expect(result).toMatchObject({ outcome: "completed", detail: `codex exited 0: ${FINAL}` });
        expect(server.credentials()).toEqual(server.requests().map(() => `Bearer ${SECRET}`));
        expect(changeSets.map((c) => c.paths)).toEqual([["greet.mjs"]]);
        const steps = await transcriptOf(w, run);
        const commands = steps.filter((s) => s.kind === "command") as { text: string; exitCode: number | null }[];
        expect(commands.map((c) => c.exitCode)).toEqual([0, 0]);
        expect(commands[1]?.text).toContain("node --test");
        expect(run.transcript).toMatchObject({ program: "codex", reached: [`127.0.0.1:${server.port}`], refused: [] });
        await expectKeyNowhere(w, changeSets[0]?.fork ?? null, steps);
      } finally {
        await server.stop();
      }

      // Past its token limit (as Codex reports them) the run fails, its transcript kept, nothing published.
      const costly = await startResponsesStandIn({
        script: [
          { toolCalls: [{ name: "apply_patch", input: patch('return "Hello, " + name + "!";') }] },
          { text: "done", usage: { inputTokens: 5000, outputTokens: 900 } },
        ],
      });
      try {
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "codex",
          model: "gpt-5.5",
          endpoint: `http://127.0.0.1:${costly.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          maxTokens: 1000,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, `run_${randomUUID()}`);
        expect(result.outcome).toBe("failed");
        expect(result.detail).toMatch(
          // Codex reports tokens in its last event: it is killed if it has not exited by the time it is read.
          /^stopped: codex used \d+ tokens, past its limit of 1000(, and was killed)?; nothing was published$/,
        );
        expect(changeSets).toEqual([]);
        expect((run.transcript as { inputTokens: number }).inputTokens).toBeGreaterThan(1000);
      } finally {
        await costly.stop();
      }

      // The same program, told by the model to write the key it was given into the file.
      const leak = await startResponsesStandIn({
        script: [
          {
            toolCalls: [
              { name: "exec_command", input: { cmd: 'printf "%s\\n" "$RHUMBATRON_MODEL_API_KEY" >> greet.mjs' } },
            ],
          },
          { text: "wrote it" },
        ],
      });
      try {
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "codex",
          model: "gpt-5.5",
          endpoint: `http://127.0.0.1:${leak.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, `run_${randomUUID()}`);
        expect(result).toMatchObject({
          outcome: "failed",
          detail:
            "refused: the Agent wrote the value of the secret MODEL_KEY into a file of its diff; nothing was published",
        });
        expect(changeSets).toEqual([]);
        expect(run.status).toBe("failed");
        const steps = await transcriptOf(w, run);
        expect(JSON.stringify(steps)).not.toContain(SECRET);
        expect(await dumpAllRows(t.db)).not.toContain(SECRET);
      } finally {
        await leak.stop();
      }
    },
    T,
  );

  it(
    "Gemini CLI reads, edits and runs the test through the real runner against the Gemini stand-in; its transcript is kept, it reached only the model, and its key is nowhere",
    async () => {
      const runId = `run_${randomUUID()}`;
      const inside = `/workspace/${dirForAgentRun(runId)}`;
      const server = await startGeminiStandIn({
        script: [
          { toolCalls: [{ name: "read_file", input: { file_path: `${inside}/greet.mjs` } }] },
          {
            toolCalls: [
              {
                name: "replace",
                input: {
                  file_path: `${inside}/greet.mjs`,
                  instruction: "End the greeting with an exclamation mark.",
                  old_string: '"Hello, " + name;',
                  new_string: '"Hello, " + name + "!";',
                },
              },
            ],
          },
          { toolCalls: [{ name: "run_shell_command", input: { command: "node --test" } }] },
          { text: FINAL, usage: { inputTokens: 300, outputTokens: 40 } },
        ],
      });
      try {
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "gemini-cli",
          model: "gemini-2.5-flash",
          endpoint: `http://127.0.0.1:${server.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, runId);
        const seen = server.requests().map((r) => `${r.path} ${r.error ?? ""}`);
        expect(result, JSON.stringify(seen)).toMatchObject({
          outcome: "completed",
          detail: `gemini-cli exited 0: ${FINAL}`,
        });
        expect(server.requests().map((r) => r.path)).toEqual(
          [0, 1, 2, 3].map(() => "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        );
        expect(server.credentials()).toEqual(server.requests().map(() => SECRET));
        const cs = changeSets[0];
        expect(changeSets.map((c) => c.paths)).toEqual([["greet.mjs"]]);
        expect(gitShow(w, cs?.fork ?? "", `${cs?.commit}:greet.mjs`)).toContain('return "Hello, " + name + "!";');

        expect(run.transcript).toMatchObject({
          program: "gemini-cli",
          version: PINNED["gemini-cli"].version,
          reached: [`127.0.0.1:${server.port}`],
          refused: [],
        });
        const steps = await transcriptOf(w, run);
        expect(steps.filter((s) => s.kind === "tool_call").map((s) => (s as { name: string }).name)).toEqual([
          "read_file",
          "replace",
          "run_shell_command",
        ]);
        expect(steps).toContainEqual(expect.objectContaining({ kind: "command", text: "node --test", exitCode: 0 }));
        expect(steps).toContainEqual(
          expect.objectContaining({ kind: "file_edit", path: `${inside}/greet.mjs`, change: "replace" }),
        );
        expect(steps).toContainEqual(expect.objectContaining({ kind: "message", text: FINAL }));
        expect(run.transcript).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
        expect((run.transcript as { outputTokens: number }).outputTokens).toBeGreaterThan(0);
        await expectKeyNowhere(w, cs?.fork ?? null, steps);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it(
    "OpenCode reads, edits and runs the test through the real runner against the Anthropic stand-in; its plugin install stays offline, it reached only the model, and its key is nowhere",
    async () => {
      const runId = `run_${randomUUID()}`;
      const inside = `/workspace/${dirForAgentRun(runId)}`;
      const server = await startAnthropicStandIn({
        script: [
          { toolCalls: [{ name: "read", input: { filePath: `${inside}/greet.mjs` } }] },
          {
            toolCalls: [
              {
                name: "edit",
                input: {
                  filePath: `${inside}/greet.mjs`,
                  oldString: '"Hello, " + name;',
                  newString: '"Hello, " + name + "!";',
                },
              },
            ],
          },
          { toolCalls: [{ name: "bash", input: { command: "node --test", description: "Run the tests" } }] },
          { text: FINAL, usage: { inputTokens: 300, outputTokens: 40 } },
        ],
      });
      try {
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "opencode",
          model: "claude-sonnet-4-5",
          endpoint: `http://127.0.0.1:${server.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 300,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, runId);
        const seen = server.requests().map((r) => `${r.path} ${r.error ?? ""}`);
        expect(result, JSON.stringify(seen)).toMatchObject({
          outcome: "completed",
          detail: `opencode exited 0: ${FINAL}`,
        });
        expect(server.requests().map((r) => [r.path, r.turn])).toEqual([
          ["/v1/messages", 0],
          ["/v1/messages", 1],
          ["/v1/messages", 2],
          ["/v1/messages", 3],
        ]);
        expect(server.credentials()).toEqual(server.requests().map(() => SECRET));
        const cs = changeSets[0];
        expect(changeSets.map((c) => c.paths)).toEqual([["greet.mjs"]]);
        expect(gitShow(w, cs?.fork ?? "", `${cs?.commit}:greet.mjs`)).toContain('return "Hello, " + name + "!";');

        // Its background plugin install stays offline: it asks the proxy for nothing but the model.
        expect(run.transcript).toMatchObject({
          program: "opencode",
          version: PINNED.opencode.version,
          reached: [`127.0.0.1:${server.port}`],
          refused: [],
        });
        const steps = await transcriptOf(w, run);
        expect(steps.filter((s) => s.kind === "tool_call").map((s) => (s as { name: string }).name)).toEqual([
          "read",
          "edit",
          "bash",
        ]);
        expect(steps).toContainEqual(expect.objectContaining({ kind: "command", text: "node --test", exitCode: 0 }));
        expect(steps).toContainEqual(
          expect.objectContaining({ kind: "file_edit", path: `${inside}/greet.mjs`, change: "edit" }),
        );
        expect(steps).toContainEqual(expect.objectContaining({ kind: "message", text: FINAL }));
        expect(steps.filter((s) => s.kind === "usage")).toHaveLength(4);
        await expectKeyNowhere(w, cs?.fork ?? null, steps);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it(
    "a program whose stream reports tokens past its limit is killed mid-run (its next model call is never answered) and publishes nothing",
    async () => {
      const server = await startAnthropicStandIn({
        script: [
          {
            toolCalls: [
              {
                name: "bash",
                input: { command: "sed -i 's/name;/name + \"!\";/' greet.mjs", description: "Edit the greeting" },
              },
            ],
            usage: { inputTokens: 5000, outputTokens: 900 },
          },
          // Held open: only the token limit can end the run before its wall time.
          { hold: true },
        ],
      });
      try {
        const w = await world();
        const projectId = await project(w, {
          kind: "program",
          program: "opencode",
          model: "claude-sonnet-4-5",
          endpoint: `http://127.0.0.1:${server.port}`,
          keySecret: "MODEL_KEY",
          timeoutSeconds: 600,
          maxTokens: 1000,
          allowOutsidePaths: false,
        });
        const { result, changeSets, run } = await runTask(w, projectId, `run_${randomUUID()}`);
        expect(result.outcome, result.detail).toBe("failed");
        expect(result.detail).toMatch(
          /^stopped: opencode used \d+ tokens, past its limit of 1000, and was killed; nothing was published$/,
        );
        expect(changeSets).toEqual([]);
        expect(run.status).toBe("failed");
        expect(run.error).toBe(result.detail);
        expect((run.transcript as { inputTokens: number }).inputTokens).toBeGreaterThan(1000);
        const steps = await transcriptOf(w, run);
        expect(steps).toContainEqual(expect.objectContaining({ kind: "command", exitCode: 0 }));
        await expectKeyNowhere(w, null, steps);
      } finally {
        await server.stop();
      }
    },
    T,
  );

  it("a program this worker does not have, or a key secret nobody set, blocks the Task with what to do; nothing runs", async () => {
    const w = await world();
    const agent: AgentChoice = {
      kind: "program",
      program: "codex",
      model: "gpt-5.5",
      endpoint: "http://127.0.0.1:9",
      keySecret: "NOBODY_SET_THIS",
      timeoutSeconds: 60,
      allowOutsidePaths: false,
    };
    const projectId = await project(w, agent);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "req-missing",
      title: "Nothing runs",
      tasks: [{ key: "greet", paths: ["greet.mjs"], editPlan: [] }],
    });
    const task = await w.db.task.findFirstOrThrow({ where: { changeId } });
    const noSecret = await runTaskDirectly(w, task, {
      agentPrograms: programs,
      credentialSecret: AUTH,
    });
    expect(noSecret.result).toMatchObject({
      outcome: "blocked",
      detail:
        "the tenant secret NOBODY_SET_THIS (given to codex) is not set: an admin sets it (rhumbatron secrets set NOBODY_SET_THIS --value-stdin), then retry the Task",
    });
    expect(await w.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
      state: "blocked",
      blockedLimit: "agent_unavailable",
    });

    const changeId2 = await createScriptedChange(w, projectId, {
      requestId: "req-no-program",
      title: "Nothing runs either",
      tasks: [{ key: "greet", paths: ["greet.mjs"], editPlan: [] }],
    });
    const task2 = await w.db.task.findFirstOrThrow({ where: { changeId: changeId2 } });
    const noProgram = await runTaskDirectly(w, task2, { agentPrograms: new Map(), credentialSecret: AUTH });
    expect(noProgram.result.outcome).toBe("blocked");
    expect(noProgram.result.detail).toBe(
      `this worker has no codex (@openai/codex@${PINNED.codex.version}): install the agent programs on its host (npm run setup -- --agent-programs), restart the worker, then retry the Task`,
    );
    expect(await w.db.agentRun.findUniqueOrThrow({ where: { id: noProgram.runId } })).toMatchObject({
      status: "blocked",
      transcript: null,
    });
    expect(await w.db.changeSet.count({ where: { changeId: { in: [changeId, changeId2] } } })).toBe(0);
  }, 120_000);
});
