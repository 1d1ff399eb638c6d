/**
 * `npm run setup`: the setup step alone (Chromium, bubblewrap, git; see scripts/lib/system-parts.ts).
 * `npm start` and `npm test` run the same step first; `.ci/run` calls this.
 */
import { exitWith } from "./lib/fail.ts";
import { ensureSystemParts, machineHost } from "./lib/system-parts.ts";

ensureSystemParts(machineHost())
  .then((r) => {
    const said = [
      r.present.length ? `present: ${r.present.join(", ")}` : "",
      r.installed.length ? `installed: ${r.installed.join(", ")}` : "",
      r.missing.length ? `missing: ${r.missing.join(", ")}` : "",
    ].filter(Boolean);
    process.stdout.write(`setup: ${said.join("; ")}\n`);
  })
  .catch(exitWith);
