import { readFile } from "node:fs/promises";
import { expect, test } from "@playwright/test";

test("the project page's Checks panel shows the checks declared in the project's own checks file", async ({ page }) => {
  const projectId = process.env.E2E_DEMO_PROJECT_ID ?? "";
  // The demo project is provisioned by the worker; its head holds .rhumbatron/checks.yml once active.
  await expect(async () => {
    await page.goto(`/projects/${projectId}`);
    await expect(page.getByTestId("project-checks")).toHaveAttribute("data-source", "file", { timeout: 2000 });
  }).toPass({ timeout: 60_000 });
  const panel = page.getByTestId("checks-panel");
  await expect(panel.getByTestId("checks-source")).toContainText(".rhumbatron/checks.yml");
  // What the file at the head declares, read here by the test from the template the project starts from.
  const text = await readFile(new URL("../../../templates/shop/.rhumbatron/checks.yml", import.meta.url), "utf8");
  const ids = [...text.matchAll(/^ {2}- id: (\S+)$/gm)].map((m) => m[1] as string);
  expect(ids.length).toBeGreaterThan(1);
  for (const id of ids) await expect(panel.getByTestId(`declared-check-${id}`)).toBeVisible();
  await expect(panel.getByTestId("checks-requires")).toContainText("node>=20");
  await expect(panel.getByTestId("setup-runs")).toBeVisible();
});
