import { expect, test } from "@playwright/test";

test("the home page lists the demo project through tRPC", async ({ page }) => {
  const trpcCalls: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("/api/trpc/")) trpcCalls.push(req.url());
  });
  await page.goto("/");
  const row = page.getByTestId("project-row").filter({ hasText: "demo-shop" });
  await expect(row).toBeVisible();
  await expect(row).toContainText(process.env.E2E_DEMO_PROJECT_ID ?? "proj_");
  await expect(row).toContainText("S0");
  // The list came from the browser's tRPC call, not only from server-rendered HTML.
  expect(trpcCalls.some((u) => u.includes("projects.list"))).toBe(true);
});

test("the worker provisions the demo project from the template: its status turns active", async ({ page }) => {
  await expect(async () => {
    await page.goto("/");
    await expect(page.getByTestId("project-row").filter({ hasText: "demo-shop" })).toContainText("active", {
      timeout: 1000,
    });
  }).toPass({ timeout: 45_000 });
});

test("the health endpoint reports the database, migrations, executor and worker heartbeat", async ({ request }) => {
  await expect
    .poll(async () => (await (await request.get("/api/health")).json()).worker?.lastHeartbeatAt ?? null, {
      timeout: 20_000,
    })
    .not.toBeNull();
  const res = await request.get("/api/health");
  expect(res.status()).toBe(200);
  const body = await res.json();
  expect(body.status).toBe("ok");
  expect(body.database).toMatchObject({ status: "ok" });
  expect(body.database.appliedMigrations).toBeGreaterThanOrEqual(1);
  expect(body.executor).toBe("local");
  expect(typeof body.version).toBe("string");
});
