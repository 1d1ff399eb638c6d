import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { AgentChoice } from "@rhumbatron/core";
import { getCandidate, setProjectAgent, setTenantSecret } from "@rhumbatron/db";
import { dumpAllRows, useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import {
  candidateFor,
  createScriptedChange,
  importedProject,
  runTaskDirectly,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { drainVerifications } from "../verification/runner.ts";

/**
 * A command Agent (agents/command-agent.ts): a program the admin names, run in the Sandbox in the
 * Task's checkout, through the real runner (fork, commit, push, ChangeSet). Command-line git reads
 * what was published. Each refusal ends with the run failed, the reason said, and no ChangeSet.
 */
const t = useTestDatabase();

const shell = (script: string, timeoutSeconds = 60): AgentChoice => ({
  kind: "command",
  argv: ["sh", "-c", script],
  timeoutSeconds,
  allowOutsidePaths: false,
  secrets: [],
});

const files = {
  "README.md": "# A small project\n",
  "notes/.keep": "",
  ".rhumbatron/checks.yml": "version: 1\nchecks:\n  - id: test\n    run: [node, --version]\n",
};

async function projectWithAgent(w: TestWorld, agent: AgentChoice | null): Promise<string> {
  const projectId = await importedProject(w, files);
  const r = await setProjectAgent(t.db, { tenantId: "ten_a", projectId, agent });
  expect(r.changed).toBe(agent !== null);
  return projectId;
}

/** Runs the Change's one Task with the real runner; returns the run's result and its ChangeSets. */
async function runOneTask(
  w: TestWorld,
  projectId: string,
  requestId: string,
  agent?: AgentChoice,
  extra: Parameters<typeof runTaskDirectly>[2] = {},
) {
  const changeId = await createScriptedChange(w, projectId, {
    requestId,
    title: `Note the change ${requestId}`,
    tasks: [
      {
        key: "note",
        paths: ["notes/"],
        editPlan: [{ op: "write", path: "notes/scripted.md", content: "from the edit plan\n" }],
        ...(agent ? { agent } : {}),
      },
    ],
  });
  const task = await w.db.task.findFirstOrThrow({ where: { changeId } });
  const { result, runId } = await runTaskDirectly(w, task, extra);
  const changeSets = await w.db.changeSet.findMany({ where: { changeId } });
  const run = await w.db.agentRun.findUniqueOrThrow({ where: { id: runId } });
  return { result, changeSets, run, task: await w.db.task.findUniqueOrThrow({ where: { id: task.id } }) };
}

const gitShow = (w: TestWorld, fork: string, object: string) =>
  execFileSync("git", ["--git-dir", join(w.root, fork), "show", object], { encoding: "utf8" });

describe("a command Agent", () => {
  it("runs the project's program in the checkout with the Task in a file and the environment; its edits are published as the ChangeSet", async () => {
    const w = await testWorld(t.db);
    const projectId = await projectWithAgent(
      w,
      shell(
        [
          'printf "%s\\n" "$RHUMBATRON_TASK_KEY" > notes/key.txt',
          'cp "$RHUMBATRON_TASK_FILE" notes/task.md',
          'printf "%s\\n" "$RHUMBATRON_TASK_PATHS" > notes/paths.txt',
          'test -s "$RHUMBATRON_CONTEXT_FILE"',
          'echo "wrote three notes"',
        ].join(" && "),
      ),
    );
    const { result, changeSets } = await runOneTask(w, projectId, "cmd-ok");
    expect(result).toMatchObject({ outcome: "completed", detail: "sh exited 0: wrote three notes" });
    expect(changeSets).toHaveLength(1);
    const cs = changeSets[0] as (typeof changeSets)[number];
    // Only the program's edits: nothing of what it was handed under .git, and not the edit plan.
    expect(cs.paths).toEqual(["notes/key.txt", "notes/paths.txt", "notes/task.md"]);
    expect(gitShow(w, cs.fork, `${cs.commit}:notes/key.txt`)).toBe("note\n");
    expect(gitShow(w, cs.fork, `${cs.commit}:notes/paths.txt`)).toBe("notes/\n");
    const task = gitShow(w, cs.fork, `${cs.commit}:notes/task.md`);
    expect(task).toMatch(/^# note\n/);
    expect(task).toContain('Part of the Change "Note the change cmd-ok".');
    expect(task).toContain("Edit only these paths: notes/.");
  }, 120_000);

  it("a program that exits non-zero fails the run with its output's last lines, and publishes nothing", async () => {
    const w = await testWorld(t.db);
    const projectId = await projectWithAgent(
      w,
      shell('echo "half done" > notes/half.txt; echo "model refused" >&2; exit 3'),
    );
    const { result, changeSets, run } = await runOneTask(w, projectId, "cmd-exit");
    expect(result.outcome).toBe("failed");
    expect(result.detail).toMatch(/^sh exited 3; nothing was published\n.*model refused/s);
    expect(run.status).toBe("failed");
    expect(changeSets).toEqual([]);
  }, 120_000);

  it("a program that runs past its limit is killed and the run fails saying so; nothing is published", async () => {
    const w = await testWorld(t.db);
    const projectId = await projectWithAgent(w, shell("echo started > notes/started.txt; exec sleep 600", 2));
    const { result, changeSets } = await runOneTask(w, projectId, "cmd-hang");
    expect(result.outcome).toBe("failed");
    expect(result.detail).toMatch(/^stopped: sh ran past its limit of 2 s and was killed; nothing was published/);
    expect(changeSets).toEqual([]);
  }, 120_000);

  it("refuses a program that edits the checks file, or .git's hooks: the run fails and nothing is published", async () => {
    const w = await testWorld(t.db);
    const gate = await projectWithAgent(
      w,
      shell('printf "version: 1\\nchecks: []\\n" > .rhumbatron/checks.yml && echo x > notes/x.txt'),
    );
    const a = await runOneTask(w, gate, "cmd-gate");
    expect(a.result.outcome).toBe("failed");
    expect(a.result.detail).toBe(
      "refused: the Agent edited the checks file (.rhumbatron), which a command or program Agent may not; nothing was published",
    );
    expect(a.changeSets).toEqual([]);

    const hooks = await projectWithAgent(
      w,
      shell('mkdir -p .git/hooks && printf "#!/bin/sh\\nexit 0\\n" > .git/hooks/post-commit && echo y > notes/y.txt'),
    );
    const b = await runOneTask(w, hooks, "cmd-hooks");
    expect(b.result).toMatchObject({
      outcome: "failed",
      detail: "refused: sh changed .git's configuration, hooks or info; nothing was published",
    });
    expect(b.changeSets).toEqual([]);
  }, 180_000);

  it("a Task's own Agent wins over the project's: scripted replays the edit plan; the model without an endpoint fails saying what to set", async () => {
    const w = await testWorld(t.db);
    const projectId = await projectWithAgent(w, shell("exit 9"));
    const scripted = await runOneTask(w, projectId, "task-scripted", { kind: "scripted" });
    expect(scripted.result.outcome).toBe("completed");
    expect(scripted.changeSets.map((c) => c.paths)).toEqual([["notes/scripted.md"]]);

    const model = await runOneTask(w, projectId, "task-model", { kind: "model" });
    expect(model.result.outcome).toBe("failed");
    expect(model.result.detail).toContain("no model endpoint: set AGENT_MODEL_URL");
    expect(model.changeSets).toEqual([]);
  }, 180_000);

  it("edits outside the Task's declared paths are kept on its ChangeSet and are a gap of the gate, unless its Agent was allowed them", async () => {
    const w = await testWorld(t.db);
    const outside = 'echo inside > notes/in.txt && echo "# changed" >> README.md';
    const strict = await projectWithAgent(w, shell(outside));
    const a = await candidateFor(w, strict, {
      requestId: "outside-strict",
      tasks: [{ key: "note", paths: ["notes/"], editPlan: [] }],
    });
    const cs = await w.db.changeSet.findFirstOrThrow({ where: { changeId: a.changeId } });
    expect([cs.paths, cs.outsidePaths]).toEqual([["README.md", "notes/in.txt"], ["README.md"]]);
    expect((await drainVerifications(verificationDeps(w)))[0]).toMatchObject({
      candidateId: a.candidateId,
      outcome: "rejected",
    });
    const c = await getCandidate(t.db, { tenantId: "ten_a", candidateId: a.candidateId }, w.config);
    expect(c.rejectionReason).toBe("1 ChangeSet edited outside its Task's declared paths");
    expect(c.gate?.gaps.map((g) => [g.checkId, g.gap, g.detail])).toEqual([
      [
        "declared-paths",
        "outside_paths",
        "Task note edited outside its declared paths: README.md (retry it, or allow its Agent to edit outside its paths)",
      ],
    ]);

    const allowed = await projectWithAgent(w, {
      kind: "command",
      argv: ["sh", "-c", outside],
      timeoutSeconds: 60,
      allowOutsidePaths: true,
      secrets: [],
    });
    const b = await candidateFor(w, allowed, {
      requestId: "outside-allowed",
      tasks: [{ key: "note", paths: ["notes/"], editPlan: [] }],
    });
    expect((await w.db.changeSet.findFirstOrThrow({ where: { changeId: b.changeId } })).outsidePaths).toEqual([]);
    expect((await drainVerifications(verificationDeps(w)))[0]).toMatchObject({
      candidateId: b.candidateId,
      outcome: "verified",
    });
  }, 180_000);

  it("gives a command the tenant secrets it names as variables; their values are cleared from its output and a diff holding one is refused", async () => {
    const w = await testWorld(t.db);
    const auth = `auth-${randomUUID()}`;
    const value = `tok-${randomUUID()}`;
    const withSecret = (script: string): AgentChoice => ({
      kind: "command",
      argv: ["sh", "-c", script],
      timeoutSeconds: 60,
      allowOutsidePaths: false,
      secrets: ["DEPLOY_TOKEN"],
    });
    const noisy = await projectWithAgent(w, withSecret('echo "using $DEPLOY_TOKEN" >&2; exit 4'));
    await setTenantSecret(
      t.db,
      { tenantId: "ten_a", name: "DEPLOY_TOKEN", value, userId: "usr_admin" },
      { authSecret: auth, now: new Date() },
    );
    const a = await runOneTask(w, noisy, "secret-noisy", undefined, { credentialSecret: auth });
    expect(a.result.outcome).toBe("failed");
    expect(a.result.detail).toBe("sh exited 4; nothing was published\nusing [secret DEPLOY_TOKEN]");

    const leaky = await projectWithAgent(w, withSecret('printf "%s\\n" "$DEPLOY_TOKEN" > notes/token.txt'));
    const b = await runOneTask(w, leaky, "secret-leak", undefined, { credentialSecret: auth });
    expect(b.result).toMatchObject({
      outcome: "failed",
      detail:
        "refused: the Agent wrote the value of the secret DEPLOY_TOKEN into a file of its diff; nothing was published",
    });
    expect(b.changeSets).toEqual([]);

    // Read with another auth secret, the value cannot be opened: the Task is blocked saying so.
    const c = await runOneTask(w, leaky, "secret-unreadable", undefined, { credentialSecret: "another-secret" });
    expect(c.result.outcome).toBe("blocked");
    expect(c.result.detail).toContain(
      "the tenant secret DEPLOY_TOKEN cannot be read with this server's RHUMBATRON_AUTH_SECRET",
    );
    expect(c.task).toMatchObject({ state: "blocked", blockedLimit: "agent_unavailable" });
    expect(JSON.stringify(w.logs.lines)).not.toContain(value);
    expect(await dumpAllRows(t.db)).not.toContain(value);
  }, 180_000);
});
