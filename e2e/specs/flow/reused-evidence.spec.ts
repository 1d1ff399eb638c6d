import { expect, type Page, test } from "@playwright/test";
import {
  candidatesOf,
  createChange,
  provisionedProject,
  waitUntil,
  writeTask,
} from "../landing/fixtures/landing-api.ts";
import { type CandidateView, candidateView } from "./fixtures/decision-api.ts";

/**
 * Reused Evidence (docs/checks-file.md, Reused Evidence) on the Candidate page, through the real product: two
 * Changes of one project that write the same file compose the same tree, so the second Candidate's
 * passes are copied from the first's, each shown as reused with a link to the first Candidate.
 */

const VERIFY_LIMIT = 360_000;

type View = Omit<CandidateView, "evidence"> & {
  evidence: { checkId: string; status: string; reusedFrom: { candidateId: string } | null }[];
};

async function verifiedCandidate(page: Page, changeId: string): Promise<View> {
  const c = await waitUntil(
    `the Candidate of ${changeId} verified`,
    async () => {
      const [row] = await candidatesOf(page.request, changeId);
      return row ? ((await candidateView(page.request, row.id)) as View) : null;
    },
    (c) => c?.status === "verified",
    VERIFY_LIMIT,
    (c) => (c && !["created", "verifying"].includes(c.status) ? `the Candidate is ${c.status}` : null),
  );
  if (!c) throw new Error(`e2e: no verified Candidate for ${changeId}`);
  return c;
}

test("a Candidate with the same tree as a verified one shows its reused passes, each linking to the first", async ({
  page,
}) => {
  test.setTimeout(2 * VERIFY_LIMIT + 60_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "reused");
  const task = () => writeTask("a", "src/reused-evidence.ts", "export const reused = true;\n");
  const first = await createChange(api, projectId, {
    title: "Add src/reused-evidence.ts",
    tasks: [task()],
    land: false,
  });
  const a = await verifiedCandidate(page, first);
  expect(a.evidence.every((e) => e.reusedFrom === null)).toBe(true);

  const second = await createChange(api, projectId, { title: "Add it again", tasks: [task()], land: false });
  const b = await verifiedCandidate(page, second);
  const reused = b.evidence.filter((e) => e.reusedFrom !== null);
  expect(reused.length).toBeGreaterThan(0);
  for (const e of reused) expect(e).toMatchObject({ status: "pass", reusedFrom: { candidateId: a.id } });

  await page.goto(`/projects/${projectId}/candidates/${b.id}`);
  const badges = page.getByTestId("evidence-reused");
  await expect(badges).toHaveCount(reused.length);
  await expect(badges.first()).toContainText("reused");
  await expect(badges.first()).toContainText("it did not run for this Candidate");
  const link = page.getByTestId("evidence-reused-from").first();
  await expect(link).toHaveText(a.id);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/candidates/${a.id}$`));
  await expect(page.getByTestId("evidence-reused")).toHaveCount(0);
});
