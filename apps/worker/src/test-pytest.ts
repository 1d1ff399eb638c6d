import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Test support only: the pytest tests run, Debian's own (fixtures/debian: pytest and the four
 * packages it imports on Python 3.11), extracted with dpkg-deb into a temporary folder once per
 * process. The host's pytest (pip's, pyenv's) is never what runs: `python3 -S` loads no site
 * folder, so only the standard library and PYTHONPATH, the extracted packages, are importable.
 * Needs only python3 and dpkg-deb, which every Debian machine has.
 */
const DEBIAN = fileURLToPath(new URL("../../../fixtures/debian/", import.meta.url));

let extracted: string | null = null;

/** The folder holding the vendored pytest's packages (its dist-packages). */
export function vendoredPytestPath(): string {
  if (extracted) return extracted;
  const dir = mkdtempSync(join(tmpdir(), "rh-pytest-"));
  for (const deb of readdirSync(DEBIAN).filter((f) => f.endsWith(".deb"))) {
    execFileSync("dpkg-deb", ["-x", join(DEBIAN, deb), dir]);
  }
  extracted = join(dir, "usr", "lib", "python3", "dist-packages");
  return extracted;
}

/** How to start the vendored pytest: `python3 ...args` in `env`. */
export function vendoredPytest(): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PYTHON")) env[k] = v;
  Object.assign(env, { PYTHONPATH: vendoredPytestPath(), PYTHONDONTWRITEBYTECODE: "1" });
  return { command: "python3", args: ["-S", "-m", "pytest"], env };
}
