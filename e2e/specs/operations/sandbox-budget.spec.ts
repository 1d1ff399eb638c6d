import { expect, test } from "@playwright/test";

/** The Sandbox budget form on /operations (an admin's): its hint says the hours of the number in the field. */
test("the Sandbox budget's hint reads the number in the field as hours, and says nothing for one that is not a number", async ({
  page,
}) => {
  await page.goto("/operations");
  const field = page.getByTestId("sandbox-budget-seconds");
  const hours = page.getByTestId("sandbox-budget-hours");
  const current = Number(await field.inputValue());
  expect(Number.isInteger(current)).toBe(true);
  await expect(hours).toHaveText(`(${current} s = ${Math.round((current / 3600) * 10) / 10} h)`);
  await field.fill("18000");
  await expect(hours).toHaveText("(18000 s = 5 h)");
  await field.fill("5400");
  await expect(hours).toHaveText("(5400 s = 1.5 h)");
  await field.fill("lots");
  await expect(hours).toHaveCount(0);
  await expect(page.getByTestId("sandbox-budget-form")).not.toContainText("72000 s = 20 h");
});
