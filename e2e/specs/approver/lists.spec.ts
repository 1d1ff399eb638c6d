import { type APIRequestContext, expect, type Page, request, test } from "@playwright/test";
import { DEMO_ADMIN_STATE } from "../../support/auth.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcData, trpcQuery } from "../../support/trpc.ts";
import { createChange, provisionedProject, waitForPromoted, writeTask } from "../landing/fixtures/landing-api.ts";

/**
 * What an approver reads in lists, at a laptop's width and at a phone's: the Candidates list names
 * each Candidate's Change, the header's items each sit on one line, and the generations' chart and
 * table show the same generations, level with each other, with nothing cut. The data is made through
 * the real product: a project of its own whose two low-risk Changes (titles longer than a chart box)
 * land when ready (the landing queue promotes them; docs/landing.md).
 */

const VIEWPORTS = [
  { name: "laptop", width: 1366, height: 768 },
  { name: "phone", width: 390, height: 844 },
] as const;

/** Several verifications one after another (a build and the tests each) on a busy machine. */
const LANDING_LIMIT = 420_000;

const PREFIX = "approver-lists";
const TITLES = [
  "Answer the slow checkout page within two hundred milliseconds",
  "Show the wishlist count beside the cart in the page header",
];

interface CandidateSummary {
  id: string;
  changeId: string;
  status: string;
  baseGeneration: number;
}

const query = <T>(api: APIRequestContext, path: string, input: Record<string, unknown>) =>
  trpcQuery(api, path, { tenantId: DEMO_TENANT, ...input }).then((r) => trpcData<T>(r));

/**
 * This spec's project with both Changes promoted (S2). A project an earlier attempt of this file
 * already landed is used again: a failed test restarts the worker, and the data is the same.
 */
async function landedProject(api: APIRequestContext): Promise<string> {
  const projects = await query<{ id: string; name: string; canonicalGeneration: number }[]>(api, "projects.list", {});
  const done = projects.find((p) => p.name.startsWith(`${PREFIX}-`) && p.canonicalGeneration >= TITLES.length);
  if (done) return done.id;
  const projectId = await provisionedProject(api, PREFIX);
  const ids = await Promise.all(
    TITLES.map((title, i) =>
      createChange(api, projectId, {
        title,
        tasks: [writeTask("a", `src/lists-${i}.ts`, `export const lists_${i} = ${i};\n`)],
        land: true,
      }),
    ),
  );
  await waitForPromoted(api, projectId, ids, LANDING_LIMIT);
  return projectId;
}

let projectId = "";

test.beforeAll(async () => {
  test.setTimeout(LANDING_LIMIT + 120_000);
  const api = await request.newContext({ baseURL: test.info().project.use.baseURL, storageState: DEMO_ADMIN_STATE });
  try {
    projectId = await landedProject(api);
  } finally {
    await api.dispose();
  }
});

/** The page's own horizontal overflow: how far the document is wider than the viewport (0: none). */
async function pageOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    return root.scrollWidth - window.innerWidth;
  });
}

for (const vp of VIEWPORTS) {
  test.describe(`at ${vp.width}x${vp.height}`, () => {
    test.use({ viewport: { width: vp.width, height: vp.height } });

    test("the Candidates list leads with each Candidate's Change title, linked, then its state, base and age", async ({
      page,
    }) => {
      const candidates = await query<CandidateSummary[]>(page.request, "candidate.list", { projectId });
      expect(candidates.length).toBeGreaterThanOrEqual(TITLES.length);
      const titles = new Map<string, string>();
      for (const c of candidates) {
        titles.set(
          c.changeId,
          (await query<{ title: string }>(page.request, "change.get", { changeId: c.changeId })).title,
        );
      }

      await page.goto(`/projects/${projectId}/candidates`);
      await expect(page.getByTestId("candidate-list")).toHaveAttribute("data-state", "ready");
      const rows = page.getByTestId("candidate-row");
      await expect(rows).toHaveCount(candidates.length);
      for (const [i, c] of candidates.entries()) {
        const row = rows.nth(i);
        const change = row.getByTestId("candidate-change");
        await expect(change).toHaveText(titles.get(c.changeId) ?? "");
        await expect(change).toHaveAttribute("href", `/projects/${projectId}/changes/${c.changeId}`);
        await expect(row.getByTestId("candidate-row-status")).toHaveAttribute("data-status", c.status);
        await expect(row.getByTestId("candidate-base")).toHaveText(`on S${c.baseGeneration}`);
        await expect(row.getByTestId("candidate-age")).toHaveText(/ago|just now/);
        const id = row.getByTestId("candidate-id");
        await expect(id).toHaveText(c.id);
        await expect(id).toHaveAttribute("href", `/projects/${projectId}/candidates/${c.id}`);
        // The title is read first and the ID is the small print: before it, and in smaller type.
        const [titleBox, idBox] = [await change.boundingBox(), await id.boundingBox()];
        expect(titleBox && idBox && titleBox.y < idBox.y, "the Change title sits above the Candidate ID").toBe(true);
        const size = (el: Element) => Number.parseFloat(getComputedStyle(el).fontSize);
        expect(await id.evaluate(size)).toBeLessThan(await change.evaluate(size));
      }
      expect(await pageOverflow(page), "the Candidates page scrolls sideways").toBeLessThanOrEqual(0);
      await saveScreenshot(page, `approver-candidates-${vp.name}`);
    });

    test("the header's items never wrap inside themselves, and the page never scrolls sideways", async ({ page }) => {
      await page.goto("/");
      const header = page.getByTestId("app-header");
      await expect(header.getByTestId("nav-projects")).toBeVisible();
      // Every link and button of the header: the product name, the nav, the settings, Sign out.
      const items = header.locator("a, button");
      expect(await items.count()).toBeGreaterThanOrEqual(8);
      // Each item's box is one line high: its height without padding and border is under two lines.
      const lines = await items.evaluateAll((els) =>
        els.map((el) => {
          const s = getComputedStyle(el);
          const inner =
            el.getBoundingClientRect().height -
            ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"].reduce(
              (sum, k) => sum + Number.parseFloat(s[k as "paddingTop"]),
              0,
            );
          return { text: (el.textContent ?? "").trim(), lines: Math.round(inner / Number.parseFloat(s.lineHeight)) };
        }),
      );
      expect(lines.filter((l) => l.lines !== 1)).toEqual([]);
      if (vp.width <= 400) {
        expect(await pageOverflow(page), "the page scrolls sideways").toBeLessThanOrEqual(0);
        // Usable on a phone: every item is on the screen, not pushed off its edge.
        for (const box of await items.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON()))) {
          expect(box.right).toBeLessThanOrEqual(vp.width);
          expect(box.left).toBeGreaterThanOrEqual(0);
        }
      }
      await saveScreenshot(page, `approver-header-${vp.name}`);
    });

    test("the generations chart and table show the same generations, level, with no label cut", async ({ page }) => {
      await page.goto(`/projects/${projectId}`);
      await expect(page.getByTestId("generation-timeline")).toHaveAttribute("data-state", "ready");
      const graph = page.getByTestId("generation-graph");
      await expect(graph.locator("svg").first()).toBeVisible();
      const rows = page.locator('[data-testid^="generation-S"]');
      const labels = await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")?.slice(11) ?? ""));
      expect(labels).toEqual(Array.from({ length: TITLES.length + 1 }, (_, i) => `S${TITLES.length - i}`));
      // Every title is in the table whole.
      for (const title of TITLES) await expect(page.getByTestId("generation-timeline")).toContainText(title);

      // The chart's text: every piece of it, with where it sits on the page.
      const texts = await graph.evaluate((root) => {
        const out: { text: string; y: number }[] = [];
        for (const svg of root.matches("svg") ? [root] : Array.from(root.querySelectorAll("svg"))) {
          const walk = document.createTreeWalker(svg, NodeFilter.SHOW_TEXT);
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            const text = (n.textContent ?? "").trim();
            if (!text) continue;
            const range = document.createRange();
            range.selectNodeContents(n);
            const r = range.getBoundingClientRect();
            out.push({ text, y: r.top + r.height / 2 });
          }
        }
        return out;
      });
      expect(
        texts.filter((t) => /(…|\.\.\.)$/.test(t.text)),
        "chart text cut with an ellipsis",
      ).toEqual([]);
      for (const label of labels) {
        const node = texts.find((t) => t.text === label);
        expect(node, `${label} in the chart`).toBeDefined();
        const row = await page.getByTestId(`generation-${label}`).boundingBox();
        // Level with its row of the table: the chart and the table read across.
        expect(node && row && node.y >= row.y && node.y <= row.y + row.height, `${label} level with its row`).toBe(
          true,
        );
      }
      // The rest of the page loaded (its lists, the policy, the releases) before measuring its width.
      await expect(page.getByTestId("change-list")).toHaveAttribute("data-state", "ready");
      await expect(page.getByTestId("policy-summary")).toHaveAttribute("data-state", "ready");
      for (const id of ["landing-queue", "releases", "index-status"]) {
        await expect(page.getByTestId(id)).not.toHaveAttribute("data-state", /loading|error/);
      }
      expect(await pageOverflow(page), "the project page scrolls sideways").toBeLessThanOrEqual(0);
      await saveScreenshot(page, `approver-generations-${vp.name}`);
    });
  });
}
