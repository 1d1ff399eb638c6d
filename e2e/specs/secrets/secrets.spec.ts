import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { signIn } from "../../support/auth.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcData, trpcErrorCode, trpcMutation, trpcQuery } from "../../support/trpc.ts";

test("an admin sets a secret that is never shown again, replaces and deletes it; a viewer gets no form", async ({
  page,
  browser,
  baseURL,
}) => {
  const name = `E2E_KEY_${randomBytes(3).toString("hex").toUpperCase()}`;
  const value = `sk-e2e-${randomBytes(12).toString("hex")}`;
  const row = page.locator(`[data-testid="secret-row"][data-name="${name}"]`);

  await page.goto("/");
  await page.getByTestId("nav-secrets").click();
  await expect(page).toHaveURL(/\/settings\/secrets$/);
  await expect(page.getByTestId("secret-set-value")).toHaveAttribute("type", "password");
  await page.getByTestId("secret-set-name").fill(name);
  await page.getByTestId("secret-set-value").fill(value);
  await page.getByTestId("secret-set-submit").click();
  await expect(page.getByTestId("secret-set-done")).toHaveText(`Set ${name}.`);
  await expect(row).toContainText("admin@demo.rhumbatron.local");
  // The form is cleared, and the value is nowhere on the page, now or after a reload.
  await expect(page.getByTestId("secret-set-value")).toHaveValue("");
  await expect(page.getByTestId("secret-set-name")).toHaveValue("");
  expect(await page.content()).not.toContain(value);
  await page.reload();
  await expect(row).toBeVisible();
  expect(await page.content()).not.toContain(value);

  // The same name again replaces the value; still one row.
  await page.getByTestId("secret-set-name").fill(name);
  await page.getByTestId("secret-set-value").fill(`${value}-2`);
  await page.getByTestId("secret-set-submit").click();
  await expect(page.getByTestId("secret-set-done")).toHaveText(`Replaced ${name}.`);
  await expect(row).toHaveCount(1);
  await saveScreenshot(page, "secrets");

  // A viewer is offered no Secrets page, is refused it by URL, and the API refuses them too.
  const email = `e2e-secrets-${randomBytes(4).toString("hex")}@demo.rhumbatron.local`;
  const added = await trpcData<{ temporaryPassword: string }>(
    await trpcMutation(page.request, "members.add", { tenantId: DEMO_TENANT, email, name: "Viewer", role: "viewer" }),
  );
  const theirs = await browser.newContext({
    baseURL,
    storageState: await signIn(baseURL ?? "", email, added.temporaryPassword),
  });
  try {
    const them = await theirs.newPage();
    await them.goto("/");
    await expect(them.getByTestId("current-user")).toContainText(email);
    await expect(them.getByTestId("nav-secrets")).toHaveCount(0);
    await them.goto("/settings/secrets");
    await expect(them.getByText("This page needs the admin role")).toBeVisible();
    await expect(them.getByTestId("secret-set-form")).toHaveCount(0);
    const list = await trpcQuery(them.request, "secrets.list", { tenantId: DEMO_TENANT });
    expect(list.status()).toBe(403);
    expect(await trpcErrorCode(list)).toBe("FORBIDDEN");
  } finally {
    await theirs.close();
  }

  // The admin deletes it, after confirming.
  await row.getByTestId("secret-delete").click();
  await page.getByTestId("secret-delete-confirm").click();
  await expect(row).toHaveCount(0);
});
