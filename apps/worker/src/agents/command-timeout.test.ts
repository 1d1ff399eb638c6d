import { loadConfig, type RhumbatronConfig, type Sandbox, type SandboxCommand } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { createScriptedChange, provisionedProject, runTaskDirectly, testWorld } from "../test-world.ts";

/**
 * The Agent's commands run in the Sandbox under `sandbox.commandTimeoutSeconds` (config.ts: 180 s),
 * which the runner turns into each command's `timeoutMs` (runner.ts, the tools it gives the Agent).
 * Read here where it arrives: at the Sandbox, for a command an Agent run really makes.
 */
const t = useTestDatabase();

/** A Sandbox that runs every command as the real one does and notes what each asked for. */
function recordingSandbox(sandbox: Sandbox, commands: SandboxCommand[]): Sandbox {
  return Object.assign(Object.create(sandbox) as Sandbox, {
    open: async (dir: Parameters<Sandbox["open"]>[0]) => {
      const ws = await sandbox.open(dir);
      return Object.assign(Object.create(ws) as typeof ws, {
        run: (cmd: SandboxCommand) => {
          commands.push(cmd);
          return ws.run(cmd);
        },
      });
    },
  });
}

/** One Agent run whose edit plan runs one command; returns what reached the Sandbox. */
async function agentCommand(config: RhumbatronConfig, requestId: string): Promise<SandboxCommand[]> {
  const w = await testWorld(t.db, config);
  const projectId = await provisionedProject(w);
  const changeId = await createScriptedChange(w, projectId, {
    requestId,
    title: "Runs a command",
    tasks: [{ key: "a", editPlan: [{ op: "run", argv: ["node", "-e", "process.exit(0)"] }] }],
  });
  const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
  const commands: SandboxCommand[] = [];
  const { result } = await runTaskDirectly(w, task, { sandbox: recordingSandbox(w.sandbox, commands) });
  expect(result.outcome, result.detail).toBe("completed");
  return commands;
}

describe("an Agent's command timeout", () => {
  it("is 180 s by default", async () => {
    const commands = await agentCommand(loadConfig("dev"), "timeout-default");
    expect(commands.map((c) => [c.argv[0], c.timeoutMs])).toEqual([["node", 180_000]]);
  });

  it("is sandbox.commandTimeoutSeconds when the configuration changes it", async () => {
    const commands = await agentCommand(
      loadConfig("dev", { sandbox: { commandTimeoutSeconds: 7 } }),
      "timeout-configured",
    );
    expect(commands.map((c) => [c.argv[0], c.timeoutMs])).toEqual([["node", 7_000]]);
  });
});
