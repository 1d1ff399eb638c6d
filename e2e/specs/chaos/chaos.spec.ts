import { spawn } from "node:child_process";
import { expect, test } from "@playwright/test";
import { ROOT } from "../../support/root.ts";

/**
 * The short fault trial: `npm run chaos` (scripts/chaos.ts, an operator's script run as a process)
 * with 3 kills of web or worker, one Postgres restart and 2 Changes, on a stack of its own (its own
 * embedded Postgres, data folder and ports). The script prints its figures and invariants as JSON;
 * every invariant must hold and every Change must be promoted. `npm run chaos` runs the long trial.
 */
test("survives SIGKILLs of web and worker and a Postgres restart: every Change lands, nothing twice, nothing lost", async () => {
  test.setTimeout(900_000);
  const run = spawn(process.execPath, ["--import", "tsx", "scripts/chaos.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      CHAOS_KILLS: "3",
      CHAOS_CHANGES: "2",
      CHAOS_PG_RESTART: "1",
      CHAOS_LIMIT_SECONDS: "780",
      DATABASE_URL: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  run.stdout.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  run.stderr.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve) => run.on("exit", (c) => resolve(c)));
  await test.info().attach("chaos.log", { body: err, contentType: "text/plain" });
  expect(out, `chaos printed no report; its log:\n${err.slice(-4000)}`).toContain("{");
  const report = JSON.parse(out.slice(out.indexOf("{"))) as {
    ok: boolean;
    kills: number;
    changes: number;
    postgresRestartedAtSeconds: number | null;
    invariants: Record<string, unknown>;
  };
  for (const [name, value] of Object.entries(report.invariants)) expect(value, name).toBe("ok");
  expect(report).toMatchObject({ ok: true, kills: 3, changes: 2 });
  expect(report.postgresRestartedAtSeconds).not.toBeNull();
  expect(code, err.slice(-4000)).toBe(0);
});
