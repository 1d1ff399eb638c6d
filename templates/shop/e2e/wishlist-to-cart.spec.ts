// The shop's browser check (.rhumbatron/checks.yml, `browser`): Rhumbatron runs this folder with its
// own Playwright runner and Chromium against `node dist/src/server.js` (listening on PORT), and keeps
// each test's outcome, a screenshot and a trace. Not compiled by `npm run build` (tsconfig: src, test).
import { expect, test } from "@playwright/test";

test("a wishlisted mug moves to the cart", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator('body[data-ready="true"]')).toBeVisible();

  await page.getByTestId("add-to-wishlist-mug").click();
  await expect(page.getByTestId("wishlist-item-mug")).toBeVisible();

  await page.getByTestId("move-to-cart-mug").click();
  await expect(page.getByTestId("cart-item-mug")).toBeVisible();
  await expect(page.getByTestId("wishlist-item-mug")).toHaveCount(0);
  await expect(page.getByTestId("cart-total")).not.toHaveText("$0.00");
});
