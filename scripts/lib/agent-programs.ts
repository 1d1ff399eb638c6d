/**
 * The setup step's part for the coding-agent programs (docs/coding-agents.md): Claude Code, Codex,
 * Gemini CLI, OpenCode and the Node 24 that programs needing Node run on (Gemini CLI), each at its
 * pinned version from the npm registry into the machine's folder
 * (apps/worker/src/agents/programs/install.ts), once per machine.
 * They are hundreds of MB each, so only what needs them installs them: `npm test` (its tests run
 * them) and `npm run setup -- --agent-programs`; never `npm install`, never `npm start` on its own.
 */
import { AGENT_PROGRAMS, installProgram, type ProgramName } from "../../apps/worker/src/agents/programs/install.ts";

export async function ensureAgentPrograms(log: (line: string) => void): Promise<void> {
  for (const name of [...AGENT_PROGRAMS, "node"] as ProgramName[]) {
    const p = await installProgram(name).catch((err: Error) => {
      throw new Error(
        `setup: could not install the agent program ${name} from the npm registry: ${err.message}. The agent-program tests need it; retry once the registry is reachable.`,
      );
    });
    if (p.installedNow) {
      log(
        `setup: installed ${p.package}@${p.version} (${Math.round(p.bytes / 1e6)} MB, ${(p.durationMs / 1000).toFixed(1)} s) for the agent-program tests`,
      );
    }
  }
}
