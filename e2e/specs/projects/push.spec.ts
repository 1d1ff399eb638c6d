import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { hydrated } from "../../support/hydrated.ts";
import { DEMO_TENANT, trpcData, trpcQuery } from "../../support/trpc.ts";

/**
 * "Push an existing repository" on the New project form (docs/repositories.md, Pushing into an
 * empty project):
 * the command the form shows once is run as it is by command-line git, and the project becomes
 * active with the pushed head as S0; the same command again is refused.
 */
const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" };
const git = async (cwd: string, ...args: string[]) =>
  (
    await promisify(execFile)("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd,
      env: gitEnv,
    })
  ).stdout.trim();

test("an admin makes a project for a push on the New project form, and the command it shows pushes a history into it once", async ({
  page,
}) => {
  const source = await mkdtemp(join(tmpdir(), "rh-e2e-push-"));
  await git(source, "init", "-q", "-b", "master");
  for (const [i, text] of ["one", "two"].entries()) {
    await writeFile(join(source, "notes.txt"), `${text}\n`);
    await git(source, "add", ".");
    await git(source, "commit", "-q", "-m", `commit ${i + 1}`);
  }
  const head = await git(source, "rev-parse", "HEAD");
  const name = `pushed-${randomBytes(3).toString("hex")}`;

  await page.goto("/");
  await hydrated(page);
  const form = page.getByTestId("create-project-form");
  await form.getByTestId("project-source-push").check();
  await form.getByTestId("project-name-input").fill(name);
  await form.getByTestId("create-project-submit").click();
  const shown = form.getByTestId("push-command").locator("code");
  await expect(shown).toContainText("git push http://x:rpt_");
  const command = (await shown.textContent()) ?? "";
  const row = page.getByTestId("project-row").filter({ hasText: name });
  await expect(row).toHaveAttribute("data-status", "awaiting_push");

  const [, , url = "", refspec = ""] = command.trim().split(/\s+/);
  await git(source, "push", url, refspec);
  await expect(row).toHaveAttribute("data-status", "active", { timeout: 60_000 });
  const projectId = (await row.getAttribute("data-project-id")) ?? "";
  const overview = await trpcData<{ generations: { generation: number; commit: string }[] }>(
    await trpcQuery(page.request, "projects.overview", { tenantId: DEMO_TENANT, projectId }),
  );
  expect(overview.generations).toEqual([expect.objectContaining({ generation: 0, commit: head })]);
  // The token was spent by that push.
  await expect(git(source, "push", url, refspec)).rejects.toThrow(/403/);
});
