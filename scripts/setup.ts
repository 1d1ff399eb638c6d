/**
 * `npm run setup`: the setup step alone (Chromium, bubblewrap, git; see scripts/lib/system-parts.ts).
 * `npm start` and `npm test` run the same step first. `-- --agent-programs` also installs the
 * coding-agent programs (scripts/lib/agent-programs.ts), which `npm test` installs itself.
 */
import { ensureAgentPrograms } from "./lib/agent-programs.ts";
import { exitWith } from "./lib/fail.ts";
import { ensureSystemParts, machineHost } from "./lib/system-parts.ts";

const agentPrograms = process.argv.includes("--agent-programs");

ensureSystemParts(machineHost())
  .then(async (r) => {
    if (agentPrograms) await ensureAgentPrograms((line) => process.stdout.write(`${line}\n`));
    return r;
  })
  .then((r) => {
    const said = [
      r.present.length ? `present: ${r.present.join(", ")}` : "",
      r.installed.length ? `installed: ${r.installed.join(", ")}` : "",
      r.missing.length ? `missing: ${r.missing.join(", ")}` : "",
    ].filter(Boolean);
    process.stdout.write(`setup: ${said.join("; ")}\n`);
  })
  .catch(exitWith);
