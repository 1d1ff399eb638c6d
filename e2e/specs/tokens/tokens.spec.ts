import { expect, request as playwrightRequest, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";

const input = (json: unknown) => `input=${encodeURIComponent(JSON.stringify({ json }))}`;
const demoTenant = { tenantId: "ten_demo" };

test("an admin creates an API token, sees its secret once, calls the API with it, and revokes it", async ({
  page,
  context,
  baseURL,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/settings/tokens");
  await expect(page.getByTestId("token-list")).toHaveAttribute("data-state", /empty|ready/);

  const form = page.getByTestId("create-token");
  await form.getByLabel("Name").fill("e2e read-only");
  await form.getByLabel("Role").selectOption("viewer");
  await form.getByRole("button", { name: "Create token" }).click();
  const secret = (await page.getByTestId("new-token-secret").textContent()) ?? "";
  expect(secret).toMatch(/^rbt_[A-Za-z0-9_-]{43}$/);
  await page.getByTestId("new-token").getByRole("button", { name: "Copy" }).click();
  await expect(page.getByTestId("new-token").getByRole("button", { name: "Copied" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

  const row = page.getByTestId("token-row").filter({ hasText: "e2e read-only" });
  await expect(row).toContainText(secret.slice(0, 12));
  await expect(row).toContainText("viewer");

  // The token acts as the admin, capped at viewer: it may read, not create.
  const api = await playwrightRequest.newContext({
    baseURL,
    storageState: { cookies: [], origins: [] }, // the token alone, no session cookie
    extraHTTPHeaders: { authorization: `Bearer ${secret}` },
  });
  const list = await api.get(`/api/trpc/projects.list?${input(demoTenant)}`);
  expect(list.status()).toBe(200);
  expect(JSON.stringify(await list.json())).toContain("demo-shop");
  const create = await api.post("/api/trpc/projects.create", { data: { json: { ...demoTenant, name: "by-token" } } });
  expect(create.status()).toBe(403);

  // After a reload the secret is gone for good; the row stays.
  await page.reload();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  await expect(page.getByText(secret)).toHaveCount(0);
  await saveScreenshot(page, "tokens"); // after the reload: the artifact never shows a secret

  await page.getByTestId("token-row").filter({ hasText: "e2e read-only" }).getByTestId("revoke-token").click();
  await expect(page.getByTestId("token-row").filter({ hasText: "e2e read-only" })).toHaveAttribute(
    "data-revoked",
    "true",
  );
  expect((await api.get(`/api/trpc/projects.list?${input(demoTenant)}`)).status()).toBe(401);
  await api.dispose();
});
