// Regenerates the Prisma client offline.
// Prisma's CLI tries to download its schema-engine binary unless told where one is;
// `generate` never runs it, so any existing path will do (see PLATFORM notes in README).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let cli;
try {
  cli = require.resolve("prisma/build/index.js");
} catch {
  console.error("prisma CLI not installed yet; run `npm install` first");
  process.exit(1);
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY)
  env.PRISMA_SCHEMA_ENGINE_BINARY = existsSync("/bin/false") ? "/bin/false" : process.execPath;
const res = spawnSync(process.execPath, [cli, "generate", "--schema", "prisma/schema.prisma"], {
  stdio: "inherit",
  env,
});
process.exit(res.status ?? 1);
