import type { ContextPacket } from "../context/packet.ts";
import type { CommandResult } from "../sandbox/model.ts";
import type { EditStep, ResourceIntents } from "../work-graph/model.ts";

/**
 * The model-provider port: what drives an Agent's tool loop inside its workspace. Every tool call
 * is checked by the toolbox (paths stay inside the run directory; commands are on the allowlist).
 */
export interface AgentTools {
  readFile(path: string): Promise<string>;
  writeFile(path: string, content: string): Promise<void>;
  deleteFile(path: string): Promise<void>;
  listFiles(): Promise<string[]>;
  runCommand(argv: string[]): Promise<CommandResult>;
}

export interface AgentTask {
  taskId: string;
  key: string;
  title: string;
  changeTitle: string;
  changeDescription: string;
  intents: ResourceIntents;
  editPlan: EditStep[] | null;
  /**
   * The run's Context Packet (docs/agents.md, Context Packets): the files picked for this Task from the
   * base tree's file index, each with the item ID the model refers to. The runner sets it.
   */
  context?: ContextPacket | null;
}

export interface AgentOutcome {
  status: "completed" | "failed";
  summary: string;
  steps: number;
}

/** A wake that reached the Agent while it works, after its run re-checked it still matters. */
export interface AgentNotice {
  reason: string;
  /** What overlaps, on this Task's side. */
  paths: string[];
  /** What the run found (the other Task, what it holds or changed), in words. */
  note: string;
}

/** Wakes delivered to a running Agent; a provider that can re-plan reads them between its steps. */
export interface AgentInbox {
  take(): AgentNotice[];
}

export interface AgentProvider {
  readonly name: string;
  run(task: AgentTask, tools: AgentTools, signal?: AbortSignal, inbox?: AgentInbox): Promise<AgentOutcome>;
}

/**
 * The default provider: replays the Task's recorded edit plan, so the product works offline and a
 * demo is deterministic (a plan does not change, so it leaves its inbox unread). A `replace` whose text is absent, or a command that exits non-zero, fails
 * the run (as a real agent's broken edit would).
 */
export const scriptedProvider: AgentProvider = {
  name: "scripted",
  async run(task, tools) {
    const plan = task.editPlan ?? [];
    let steps = 0;
    for (const step of plan) {
      steps++;
      switch (step.op) {
        case "write":
          await tools.writeFile(step.path, step.content);
          break;
        case "delete":
          await tools.deleteFile(step.path);
          break;
        case "replace": {
          const before = await tools.readFile(step.path);
          if (!before.includes(step.find)) {
            return {
              status: "failed",
              summary: `step ${steps}: ${step.path} does not contain the text to replace`,
              steps,
            };
          }
          await tools.writeFile(step.path, before.replace(step.find, step.replace));
          break;
        }
        case "run": {
          const r = await tools.runCommand(step.argv);
          if (r.exitCode !== 0 || r.timedOut) {
            const why = r.timedOut ? "timed out" : `exited with ${r.exitCode}`;
            return {
              status: "failed",
              summary: `step ${steps}: ${step.argv.join(" ")} ${why}: ${r.stderr.slice(-500)}`,
              steps,
            };
          }
          break;
        }
      }
    }
    return {
      status: "completed",
      summary: plan.length ? `applied ${plan.length} planned steps` : "no edit plan: nothing to change",
      steps,
    };
  },
};
