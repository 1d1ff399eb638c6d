import { expect, type Page, test } from "@playwright/test";
import { expectDecision } from "../../support/decision.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import {
  candidate,
  candidatesOf,
  canonicalAdvances,
  createChange,
  landingQueue,
  mainFiles,
  overview,
  provisionedProject,
  setLanding,
  waitForPromoted,
  waitUntil,
  writeTask,
} from "./fixtures/landing-api.ts";

/**
 * The landing queue through the real product (docs/landing.md): web and worker as processes, real
 * Postgres, real git, the scripted agent replaying each Task's edit plan in the Sandbox and the
 * template's own checks. Low-risk Changes need no approver (policy-1 gates high and critical), so a
 * Change that lands when ready is promoted with no human action; these specs never call approve or
 * promote. Each test has a project of its own, so its queue and generations are its alone.
 */

/** One outer limit for the landing itself: several verifications, one after another, on a busy machine. */
const LANDING_LIMIT = 360_000;
/** Source sync fast-forwards main after the promotion; the feed is polled once a second. */
const FOLLOW_LIMIT = 60_000;

/** Every promotion of the project was made by the landing queue, none by a person. */
async function expectLandedByTheQueue(page: Page, projectId: string, changeIds: string[]) {
  const o = await overview(page.request, projectId);
  const promotions = o.generations.filter((g) => g.generation > 0);
  expect(promotions.map((g) => g.changeId).sort()).toEqual([...changeIds].sort());
  for (const g of promotions) {
    const c = await candidate(page.request, g.candidateId ?? "");
    expect(c.status).toBe("promoted");
    expect(c.approval, `${g.changeId}'s Candidate needed no approver and had none`).toMatchObject({
      required: false,
      state: "not_required",
      decision: null,
    });
  }
  const advances = await canonicalAdvances(page, projectId, promotions.length, FOLLOW_LIMIT);
  expect(advances.map((a) => a.actor)).toEqual(promotions.map(() => "system:landing-queue"));
}

test("three low-risk Changes created at the same moment all land when ready, with no human action", async ({
  page,
}) => {
  test.setTimeout(LANDING_LIMIT + 180_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "landing-three");
  const names = ["one", "two", "three"];
  const file = (n: string) => `src/landing-${n}.ts`;
  const content = (n: string) => `export const landing_${n} = "${n}";\n`;

  await page.goto(`/projects/${projectId}`);
  await expect(page.getByTestId("landing-queue")).toHaveAttribute("data-state", "empty");

  const ids = await Promise.all(
    names.map((n) =>
      createChange(api, projectId, {
        title: `Add ${file(n)}`,
        tasks: [writeTask("a", file(n), content(n))],
        land: true,
      }),
    ),
  );
  expect(new Set(ids).size).toBe(3);

  await test.step("the project page's Landing queue panel lists the three Changes", async () => {
    // It refreshes every 3 s; the first promotion is a verification (a build and the tests) away.
    const entries = page.getByTestId("landing-entry");
    await expect(entries).toHaveCount(3, { timeout: 20_000 });
    expect((await entries.evaluateAll((els) => els.map((e) => e.getAttribute("data-change-id")))).sort()).toEqual(
      [...ids].sort(),
    );
  });

  await test.step("all three are promoted, one generation each", async () => {
    await waitForPromoted(api, projectId, ids, LANDING_LIMIT);
    expect((await overview(api, projectId)).project.canonicalGeneration).toBe(3);
    expect(await landingQueue(api, projectId)).toEqual([]);
  });

  await test.step("main, cloned over git, holds all three edits", async () => {
    const files = await mainFiles(api, projectId, names.map(file), FOLLOW_LIMIT);
    expect(files).toEqual(Object.fromEntries(names.map((n) => [file(n), content(n)])));
  });

  await test.step("no person approved or promoted anything: every promotion was the landing queue's", async () => {
    await expectLandedByTheQueue(page, projectId, ids);
  });

  await test.step("the Landing queue panel empties and the page shows S3", async () => {
    await page.goto(`/projects/${projectId}`);
    await expect(page.getByTestId("landing-queue")).toHaveAttribute("data-state", "empty", { timeout: 15_000 });
    await expect(page.getByTestId("project-generation")).toHaveText("S3");
    await saveScreenshot(page, "landing-queue-landed");
  });
});

test("a diamond Change (a -> b, a -> c, {b, c} -> d) lands when ready, with d built on both b and c", async ({
  page,
}) => {
  test.setTimeout(LANDING_LIMIT + 180_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "landing-diamond");
  const path = (k: string) => `src/diamond-${k}.ts`;
  const changeId = await createChange(api, projectId, {
    title: "A diamond",
    land: true,
    tasks: [
      writeTask("a", path("a"), "export const a = 1;\n"),
      writeTask("b", path("b"), "export const b = 2;\n", ["a"]),
      writeTask("c", path("c"), "export const c = 3;\n", ["a"]),
      // d writes what b and c wrote: it can only do so if its workspace starts from both.
      {
        key: "d",
        title: "Join b and c",
        dependsOn: ["b", "c"],
        intents: { paths: [path("d")] },
        editPlan: [
          {
            op: "run",
            argv: [
              "node",
              "-e",
              `const fs=require("fs");fs.writeFileSync("${path("d")}",fs.readFileSync("${path("b")}","utf8")+fs.readFileSync("${path("c")}","utf8"))`,
            ],
          },
        ],
      },
    ],
  });

  await waitForPromoted(api, projectId, [changeId], LANDING_LIMIT);
  const files = await mainFiles(api, projectId, ["a", "b", "c", "d"].map(path), FOLLOW_LIMIT);
  expect(files).toEqual({
    [path("a")]: "export const a = 1;\n",
    [path("b")]: "export const b = 2;\n",
    [path("c")]: "export const c = 3;\n",
    [path("d")]: "export const b = 2;\nexport const c = 3;\n",
  });
  await expectLandedByTheQueue(page, projectId, [changeId]);
});

test("a Change made stale by another's promotion is recomposed on the new generation and still lands", async ({
  page,
}) => {
  test.setTimeout(LANDING_LIMIT + 180_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "landing-stale");
  const b = await createChange(api, projectId, {
    title: "Add src/stale-b.ts",
    tasks: [writeTask("b", "src/stale-b.ts", "export const b = 2;\n")],
    land: false,
  });

  const first = await test.step("B, not landing, is verified on S0 and waits", async () => {
    const [c] = await waitUntil(
      "B verified",
      () => candidatesOf(api, b),
      (cs) => cs[0]?.status === "verified",
      LANDING_LIMIT,
      (cs) => (cs[0]?.status === "rejected" ? `rejected: ${cs[0].rejectionReason}` : null),
    );
    expect(c).toMatchObject({ baseGeneration: 0, recomposedFrom: null });
    expect(await landingQueue(api, projectId)).toEqual([]);
    return c;
  });

  const a = await test.step("A lands when ready and moves main to S1", async () => {
    const a = await createChange(api, projectId, {
      title: "Add src/stale-a.ts",
      tasks: [writeTask("a", "src/stale-a.ts", "export const a = 1;\n")],
      land: true,
    });
    await waitForPromoted(api, projectId, [a], LANDING_LIMIT);
    return a;
  });

  await test.step("B's Candidate is stale, and a new one composed on S1 replaces it and is verified", async () => {
    const [again] = await waitUntil(
      "B recomposed on S1 and verified",
      () => candidatesOf(api, b),
      (cs) => cs[0]?.baseGeneration === 1 && cs[0].status === "verified",
      LANDING_LIMIT,
      (cs) => (cs[0]?.status === "rejected" ? `rejected: ${cs[0].rejectionReason}` : null),
    );
    expect(again).toMatchObject({
      recomposedFrom: first?.id,
      recomposeReason: `recomposed on generation 1 after ${a} was promoted`,
    });
    expect((await candidate(api, first?.id ?? "")).status).toBe("stale");
  });

  await test.step("the stale Candidate's page shows stale first, naming the Candidate that replaced it, and no Promote", async () => {
    const replacement = (await candidatesOf(api, b)).find((c) => c.recomposedFrom === first?.id);
    expect(replacement, "B's Candidate recomposed from the stale one").toBeDefined();
    await page.goto(`/projects/${projectId}/candidates/${first?.id}`);
    const header = page.getByTestId("decision-header");
    await expect(header).toHaveAttribute("data-state", "stale");
    await expect(page.getByTestId("decision-headline")).toContainText(
      `Stale: main moved on; recomposed as ${replacement?.id}`,
    );
    await expect(header.getByRole("link", { name: "open it" })).toHaveAttribute("href", `./${replacement?.id}`);
    // Its Gate does not call it promotable: its base is no longer canonical.
    await expect(page.getByTestId("gate-promotable")).toHaveText("stale: its base is no longer canonical");
    await expectDecision(page, {
      state: "stale",
      headline: `Stale: main moved on; recomposed as ${replacement?.id} open it`,
      actions: [],
      screenshot: "candidate-decision-stale",
    });
  });

  await test.step("turned on to land, B lands on S2 and main holds both edits", async () => {
    expect(await setLanding(api, b, true)).toMatchObject({ landWhenReady: true, changed: true });
    await waitForPromoted(api, projectId, [b], LANDING_LIMIT);
    const files = await mainFiles(api, projectId, ["src/stale-a.ts", "src/stale-b.ts"], FOLLOW_LIMIT);
    expect(files).toEqual({ "src/stale-a.ts": "export const a = 1;\n", "src/stale-b.ts": "export const b = 2;\n" });
    await expectLandedByTheQueue(page, projectId, [a, b]);
  });
});
