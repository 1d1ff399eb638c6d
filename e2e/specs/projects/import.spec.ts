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
 * "Import a repository" on the New project form (docs/repositories.md): a repository made
 * here with command-line git, on this host, becomes a project whose S0 is its head commit; a source
 * the form refuses shows why beside the field and creates nothing; one the worker cannot read ends
 * failed with the reason on the list and the project page.
 */
const git = async (cwd: string, ...args: string[]) =>
  (
    await promisify(execFile)("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd,
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    })
  ).stdout.trim();

test("an admin imports a local repository from the New project form; a refused source and a missing one say why", async ({
  page,
}) => {
  const source = await mkdtemp(join(tmpdir(), "rh-e2e-import-"));
  // A submodule beside it, which the form's box has the worker fetch.
  const lib = await mkdtemp(join(tmpdir(), "rh-e2e-import-lib-"));
  await git(lib, "init", "-q", "-b", "main");
  await writeFile(join(lib, "lib.txt"), "the lib\n");
  await git(lib, "add", ".");
  await git(lib, "commit", "-q", "-m", "lib");
  await git(source, "init", "-q", "-b", "master");
  for (const [i, text] of ["one", "two", "three"].entries()) {
    await writeFile(join(source, "notes.txt"), `${text}\n`);
    if (i === 2) await git(source, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
    await git(source, "add", ".");
    await git(source, "commit", "-q", "-m", `commit ${i + 1}`);
  }
  const head = await git(source, "rev-parse", "HEAD");
  const suffix = randomBytes(3).toString("hex");
  const name = `imported-${suffix}`;

  await page.goto("/");

  await hydrated(page);
  const form = page.getByTestId("create-project-form");
  await form.getByTestId("project-source-import").check();
  await form.getByTestId("project-name-input").fill(name);

  await test.step("a relative path is refused beside the field, and nothing is created", async () => {
    await form.getByTestId("project-import-from").fill("shop");
    await form.getByTestId("create-project-submit").click();
    await expect(form.getByTestId("import-from-error")).toContainText(
      "an http:// or https:// URL, a file:// URL or an absolute path on the server",
    );
    await expect(page.getByTestId("project-row").filter({ hasText: name })).toHaveCount(0);
  });

  await test.step("the password is a password input; a user name without it is refused beside the fields", async () => {
    await form.getByTestId("project-import-from").fill("https://git.example.com/team/private.git");
    await expect(form.getByTestId("project-import-password")).toHaveAttribute("type", "password");
    await form.getByTestId("project-import-username").fill("ada");
    await form.getByTestId("create-project-submit").click();
    await expect(form.getByTestId("import-credentials-error")).toContainText(
      "Give both the user name and the password",
    );
    await expect(page.getByTestId("project-row").filter({ hasText: name })).toHaveCount(0);
    await form.getByTestId("project-import-username").fill("");
  });

  await test.step("the absolute path imports with its submodules: active, at S0, which is the source's head", async () => {
    await form.getByTestId("project-import-from").fill(source);
    await form.getByTestId("project-import-submodules").check();
    await form.getByTestId("create-project-submit").click();
    const row = page.getByTestId("project-row").filter({ hasText: name });
    await expect(row).toHaveAttribute("data-status", "active", { timeout: 60_000 });
    await expect(row.getByTestId("project-generation")).toHaveText("S0");
    const projectId = (await row.getAttribute("data-project-id")) ?? "";
    const overview = await trpcData<{ generations: { generation: number; commit: string }[] }>(
      await trpcQuery(page.request, "projects.overview", { tenantId: DEMO_TENANT, projectId }),
    );
    expect(overview.generations).toEqual([expect.objectContaining({ generation: 0, commit: head })]);
    await row.getByTestId("project-link").click();
    await expect(page.getByTestId("project-source")).toContainText(
      `Imported from ${source} (its HEAD branch), with its submodules.`,
    );
  });

  await test.step("a path that does not exist ends failed, with the reason on the list and the page", async () => {
    await page.goto("/");
    await hydrated(page);
    await form.getByTestId("project-source-import").check();
    await form.getByTestId("project-name-input").fill(`missing-${suffix}`);
    await form.getByTestId("project-import-from").fill(join(source, "not-here"));
    await form.getByTestId("create-project-submit").click();
    const row = page.getByTestId("project-row").filter({ hasText: `missing-${suffix}` });
    await expect(row).toHaveAttribute("data-status", "failed", { timeout: 60_000 });
    await expect(row.getByTestId("project-failure")).toContainText("does not exist on the worker's host");
    await row.getByTestId("project-link").click();
    await expect(page.getByTestId("project-failure")).toContainText("does not exist on the worker's host");
  });
});
