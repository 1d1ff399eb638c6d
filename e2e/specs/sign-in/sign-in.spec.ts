import { expect, test } from "@playwright/test";
import { SIGNED_OUT } from "../../support/auth.ts";

// Starts without the demo admin's cookie: this spec signs in through the form.
test.use({ storageState: SIGNED_OUT });

const email = () => process.env.E2E_DEMO_EMAIL ?? "admin@demo.rhumbatron.local";
const password = () => process.env.E2E_DEMO_PASSWORD ?? "rhumbatron-demo";

test("a signed-out visitor is sent to sign-in, is refused a wrong password, and lands where they were going", async ({
  page,
}) => {
  await page.goto("/settings/tokens");
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fsettings%2Ftokens$/);
  await expect(page.getByTestId("current-user")).toContainText("Not signed in");

  const form = page.getByTestId("sign-in-form");
  await form.getByLabel("Email").fill(email());
  await form.getByLabel("Password").fill("not-the-password");
  await form.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-in-error")).toContainText(/invalid email or password/i);
  await expect(page).toHaveURL(/\/sign-in/);

  await form.getByLabel("Password").fill(password());
  await form.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/settings\/tokens$/);
  await expect(page.getByTestId("current-user")).toContainText(email());
  await expect(page.getByRole("heading", { name: "API tokens" })).toBeVisible();

  await page.getByTestId("sign-out").click();
  await expect(page).toHaveURL(/\/sign-in$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
});

test("the API answers 401 without a session", async ({ request }) => {
  const res = await request.get("/api/trpc/tenants.mine");
  expect(res.status()).toBe(401);
});
