import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { SIGNED_OUT } from "../../support/auth.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcErrorCode, trpcQuery } from "../../support/trpc.ts";

test("an admin adds a viewer who signs in with the temporary password, then changes their role and removes them", async ({
  page,
  browser,
  baseURL,
}) => {
  const email = `e2e-${randomBytes(4).toString("hex")}@demo.rhumbatron.local`;
  const row = page.locator(`[data-testid="member-row"][data-email="${email}"]`);

  // The demo admin adds a viewer and reads the temporary password, shown once.
  await page.goto("/");
  await page.getByTestId("nav-members").click();
  await expect(page).toHaveURL(/\/settings\/members$/);
  await expect(page.getByTestId("members-table")).toHaveAttribute("data-state", "ready");
  await page.getByTestId("member-add-email").fill(email);
  await page.getByTestId("member-add-name").fill("E2E Newcomer");
  await page.getByTestId("member-add-role").selectOption("viewer");
  await page.getByTestId("member-add-submit").click();
  const password = (await page.getByTestId("member-temp-password").textContent()) ?? "";
  expect(password.length).toBeGreaterThanOrEqual(16);
  await expect(row).toHaveAttribute("data-role", "viewer");

  // Adding them again is refused, and no second password appears.
  await page.getByTestId("member-add-email").fill(email);
  await page.getByTestId("member-add-name").fill("Again");
  await page.getByTestId("member-add-submit").click();
  await expect(page.getByTestId("member-add-error")).toContainText("already a member");
  await expect(page.getByTestId("member-temp-password")).toHaveCount(0);

  // They sign in through the form in a browser of their own and see the tenant's projects.
  const theirs = await browser.newContext({ baseURL, storageState: SIGNED_OUT });
  try {
    const them = await theirs.newPage();
    await them.goto("/sign-in");
    const form = them.getByTestId("sign-in-form");
    await form.getByLabel("Email").fill(email);
    await form.getByLabel("Password").fill(password);
    await form.getByRole("button", { name: "Sign in" }).click();
    await expect(them.getByTestId("current-user")).toContainText(email);
    await expect(them.getByTestId("tenant-name")).toHaveText("Demo");
    await expect(them.getByTestId("project-list")).toContainText("demo-shop");
    // A viewer is offered no member administration, and is refused it by URL.
    await expect(them.getByTestId("nav-members")).toHaveCount(0);
    await them.goto("/settings/members");
    await expect(them.getByText("This page needs the admin role")).toBeVisible();
    await expect(them.getByTestId("members-table")).toHaveCount(0);

    // The admin makes them a member; their next page shows the new role.
    await row.getByTestId("member-role-select").selectOption("member");
    await expect(row).toHaveAttribute("data-role", "member");
    await them.goto("/");
    await expect(them.getByTestId("tenant-role")).toHaveText("member");
    await saveScreenshot(page, "members");

    // The admin removes them, after confirming.
    await row.getByTestId("member-remove").click();
    await page.getByTestId("member-remove-confirm").click();
    await expect(row).toHaveCount(0);

    // Their session still signs them in, but the tenant and its projects are gone from their view.
    await them.reload();
    await expect(them.getByText("You are not a member of any tenant yet.")).toBeVisible();
    await expect(them.getByTestId("project-list")).toHaveCount(0);
    await expect(them.getByText("demo-shop")).toHaveCount(0);
    const list = await trpcQuery(them.request, "projects.list", { tenantId: DEMO_TENANT });
    expect(list.status()).toBe(403);
    expect(await trpcErrorCode(list)).toBe("FORBIDDEN");
  } finally {
    await theirs.close();
  }
});
