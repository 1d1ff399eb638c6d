import { randomBytes } from "node:crypto";
import { expect, type Page, test } from "@playwright/test";
import { SIGNED_OUT } from "../../support/auth.ts";
import { saveScreenshot } from "../../support/screenshots.ts";

const demoEmail = () => process.env.E2E_DEMO_EMAIL ?? "admin@demo.rhumbatron.local";

async function signInWithForm(page: Page, email: string, password: string) {
  await page.goto("/sign-in");
  const form = page.getByTestId("sign-in-form");
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Password").fill(password);
  await form.getByRole("button", { name: "Sign in" }).click();
}

async function submitChange(page: Page, current: string, next: string, confirm = next) {
  await page.getByTestId("current-password").fill(current);
  await page.getByTestId("new-password").fill(next);
  await page.getByTestId("confirm-password").fill(confirm);
  await page.getByTestId("change-password-submit").click();
}

// Sign-in is rate limited (3 tries per 10 seconds): this spec signs in three times, no more.
test("a new member replaces their temporary password on the account page; an admin's reset ends their session", async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(90_000);
  const email = `e2e-account-${randomBytes(4).toString("hex")}@demo.rhumbatron.local`;
  const row = page.locator(`[data-testid="member-row"][data-email="${email}"]`);
  const chosen = "a long password of my own";

  // The demo admin adds them and passes on the temporary password.
  await page.goto("/settings/members");
  await page.getByTestId("member-add-email").fill(email);
  await page.getByTestId("member-add-name").fill("E2E Account");
  await page.getByTestId("member-add-submit").click();
  const temporary = (await page.getByTestId("member-temp-password").textContent()) ?? "";
  expect(temporary.length).toBeGreaterThanOrEqual(16);
  await page.getByTestId("member-added").getByRole("button", { name: "Done" }).click();
  // An admin resets others' passwords, never their own here.
  const ownRow = page.locator(`[data-testid="member-row"][data-email="${demoEmail()}"]`);
  await expect(ownRow.getByTestId("member-remove")).toBeVisible();
  await expect(ownRow.getByTestId("member-reset-password")).toHaveCount(0);

  const theirs = await browser.newContext({ baseURL, storageState: SIGNED_OUT });
  try {
    const them = await theirs.newPage();
    await signInWithForm(them, email, temporary);
    await expect(them.getByTestId("current-user")).toContainText(email);
    await them.getByTestId("nav-account").click();
    await expect(them).toHaveURL(/\/settings\/account$/);
    const error = them.getByTestId("account-error");

    // Mistakes are named; the first two are caught before anything is sent.
    await submitChange(them, temporary, chosen, `${chosen}!`);
    await expect(error).toHaveText("The new password and its confirmation do not match.");
    await submitChange(them, temporary, "too-short");
    await expect(error).toContainText("at least 12 characters");
    await submitChange(them, "not-the-temporary-password", chosen);
    await expect(error).toHaveText("Your current password is not correct.");
    await expect(them.getByTestId("account-saved")).toHaveCount(0);

    await submitChange(them, temporary, chosen);
    await expect(them.getByTestId("account-saved")).toContainText("Password changed");
    await expect(error).toHaveCount(0);
    await expect(them.getByTestId("current-password")).toHaveValue("");
    await saveScreenshot(them, "account");
    // Still signed in in this browser (a fresh session), until they sign out.
    await them.reload();
    await expect(them.getByTestId("account-form")).toBeVisible();
    await them.getByTestId("sign-out").click();
    await expect(them).toHaveURL(/\/sign-in$/);

    // The temporary password no longer works; their own does.
    await signInWithForm(them, email, temporary);
    await expect(them.getByTestId("sign-in-error")).toContainText(/invalid email or password/i);
    await them.getByTestId("sign-in-form").getByLabel("Password").fill(chosen);
    await them.getByTestId("sign-in-form").getByRole("button", { name: "Sign in" }).click();
    await expect(them.getByTestId("tenant-name")).toHaveText("Demo");

    // Without any tenant, the account page is still theirs.
    await page.reload();
    await row.getByTestId("member-remove").click();
    await page.getByTestId("member-remove-confirm").click();
    await expect(row).toHaveCount(0);
    await them.goto("/settings/account");
    await expect(them.getByTestId("account-form")).toBeVisible();
    await expect(them.getByTestId("nav-account")).toBeVisible();
    await expect(them.getByTestId("tenant-name")).toHaveCount(0);

    // Back in the tenant, the admin resets their password: shown once, and their session ends.
    await page.getByTestId("member-add-email").fill(email);
    await page.getByTestId("member-add-name").fill("E2E Account");
    await page.getByTestId("member-add-submit").click();
    await expect(page.getByTestId("member-added")).toContainText("already had an account");
    await row.getByTestId("member-reset-password").click();
    await row.getByTestId("member-reset-confirm").click();
    const result = page.getByTestId("member-reset-result");
    await expect(result).toContainText(`${email}'s old password no longer works`);
    await expect(result).toContainText("One browser signed in as them was signed out.");
    const reset = (await page.getByTestId("member-reset-temp-password").textContent()) ?? "";
    expect(reset.length).toBeGreaterThanOrEqual(16);
    expect(reset).not.toBe(temporary);
    await saveScreenshot(page, "members-reset");
    await them.goto("/settings/account");
    await expect(them).toHaveURL(/\/sign-in\?next=%2Fsettings%2Faccount$/);
  } finally {
    await theirs.close();
  }
});
