import { randomBytes } from "node:crypto";
import { type Browser, expect, test } from "@playwright/test";
import { type StorageState, signIn } from "../../support/auth.ts";
import { DEMO_TENANT, trpcData, trpcErrorCode, trpcMutation, trpcQuery } from "../../support/trpc.ts";
import { type SeededUser, seedUsers } from "./fixtures/users.ts";

const demoProject = () => process.env.E2E_DEMO_PROJECT_ID ?? "";

const MEMBER: SeededUser = {
  tenant: { slug: "demo", name: "Demo" },
  email: "member@demo.rhumbatron.local",
  name: "E2E Member",
  role: "member",
  password: "e2e-member-password",
};

const OUTSIDER: SeededUser = {
  tenant: { slug: "e2e-other", name: "Other Tenant" },
  email: "admin@other.rhumbatron.local",
  name: "E2E Outsider",
  // An admin of their own tenant: the highest role anywhere, and still nothing in the demo tenant.
  role: "admin",
  password: "e2e-outsider-password",
};

/** By email: each user's browser state once signed in, and the outsider's own tenant. */
const states: Record<string, StorageState> = {};
let outsiderTenantId = "";

test.beforeAll(async ({ baseURL }) => {
  // Four runs of the operator command, a few seconds each.
  test.setTimeout(120_000);
  const [member, outsider] = await seedUsers([MEMBER, OUTSIDER]);
  expect(member?.tenantId).toBe(DEMO_TENANT);
  outsiderTenantId = outsider?.tenantId ?? "";
  for (const u of [MEMBER, OUTSIDER]) states[u.email] = await signIn(baseURL ?? "", u.email, u.password);
});

async function pageAs(browser: Browser, baseURL: string | undefined, user: SeededUser) {
  const context = await browser.newContext({ baseURL, storageState: states[user.email] });
  return { context, page: await context.newPage() };
}

interface CandidateSummary {
  id: string;
  status: string;
  composedTree: string | null;
  approval: { required: boolean; state: string };
}

test("a member sees a Candidate that needs approval but cannot approve or promote it, in the page or the API", async ({
  page,
  browser,
  baseURL,
}) => {
  // One Agent run and a low-risk verification (build, the unit suite, the authorization tests).
  test.setTimeout(240_000);
  const projectId = demoProject();

  // The admin asks for a Change that touches authorization: its Candidate needs a person's approval.
  const created = await trpcData<{ changeId: string }>(
    await trpcMutation(page.request, "change.create", {
      tenantId: DEMO_TENANT,
      projectId,
      clientRequestId: `e2e-roles-${randomBytes(6).toString("hex")}`,
      change: {
        title: "Write down who may change another customer's cart",
        riskTier: "low",
        tasks: [
          {
            key: "note",
            title: "Authorization note",
            intents: { paths: ["src/authorization-note.ts"] },
            editPlan: [
              {
                op: "write",
                path: "src/authorization-note.ts",
                content: 'export const AUTHORIZATION_NOTE = "Only admins act on another customer\'s cart.";\n',
              },
            ],
          },
        ],
      },
    }),
  );
  let candidateId = "";
  await expect
    .poll(
      async () => {
        const list = await trpcData<{ id: string }[]>(
          await trpcQuery(page.request, "change.candidates", { tenantId: DEMO_TENANT, changeId: created.changeId }),
        );
        candidateId = list[0]?.id ?? "";
        if (!candidateId) return "no Candidate yet";
        const c = await trpcData<CandidateSummary>(
          await trpcQuery(page.request, "candidate.get", { tenantId: DEMO_TENANT, candidateId }),
        );
        return c.status;
      },
      { timeout: 200_000, intervals: [2_000] },
    )
    .toMatch(/^(verified|rejected|stale)$/);
  const candidate = await trpcData<CandidateSummary>(
    await trpcQuery(page.request, "candidate.get", { tenantId: DEMO_TENANT, candidateId }),
  );
  expect(candidate.status).toBe("verified");
  expect(candidate.approval).toMatchObject({ required: true, state: "pending" });
  const treeHash = candidate.composedTree ?? "";
  const url = `/projects/${projectId}/candidates/${candidateId}`;

  // The admin (an approver and above) is offered the decision on this tree.
  await page.goto(url);
  await expect(page.getByTestId("approve-tree-hash")).toHaveText(treeHash);
  await expect(page.getByTestId("approve-button")).toBeEnabled();
  // Ready to approve: that is the decision offered; Promote waits for the approval.
  await expect(page.getByTestId("decision-header")).toHaveAttribute("data-state", "ready_to_approve");
  await expect(page.getByTestId("promote-button")).toHaveCount(0);

  const member = await pageAs(browser, baseURL, MEMBER);
  try {
    await member.page.goto(url);
    await expect(member.page.getByTestId("current-user")).toContainText(MEMBER.email);
    await expect(member.page.getByTestId("candidate-status")).toHaveAttribute("data-status", "verified");
    await expect(member.page.getByTestId("approval-state")).toHaveText("pending");
    await expect(member.page.getByTestId("decision-header").getByTestId("approval-waiting")).toHaveText(
      "Waiting for an approver.",
    );
    await expect(member.page.getByTestId("approve-button")).toHaveCount(0);
    await expect(member.page.getByTestId("reject-button")).toHaveCount(0);
    await expect(member.page.getByTestId("promote-button")).toHaveCount(0);

    // The API refuses the member the same decision, with the exact tree the admin was offered.
    const approve = await trpcMutation(member.page.request, "candidate.approve", {
      tenantId: DEMO_TENANT,
      candidateId,
      treeHash,
    });
    expect(approve.status()).toBe(403);
    expect(await trpcErrorCode(approve)).toBe("FORBIDDEN");
    const promote = await trpcMutation(member.page.request, "candidate.promote", {
      tenantId: DEMO_TENANT,
      candidateId,
    });
    expect(promote.status()).toBe(403);
    expect(await trpcErrorCode(promote)).toBe("FORBIDDEN");
  } finally {
    await member.context.close();
  }

  // Nothing was decided.
  const after = await trpcData<CandidateSummary>(
    await trpcQuery(page.request, "candidate.get", { tenantId: DEMO_TENANT, candidateId }),
  );
  expect(after.status).toBe("verified");
  expect(after.approval.state).toBe("pending");
});

test("a user of another tenant cannot open the demo project, by URL or through the API", async ({
  browser,
  baseURL,
}) => {
  const projectId = demoProject();
  const outsider = await pageAs(browser, baseURL, OUTSIDER);
  const { page } = outsider;
  try {
    await page.goto("/");
    await expect(page.getByTestId("tenant-name")).toHaveText(OUTSIDER.tenant.name);
    await expect(page.getByTestId("project-list")).toHaveAttribute("data-state", "empty");

    await page.goto(`/projects/${projectId}`);
    await expect(page.getByTestId("project-overview")).toHaveAttribute("data-state", "not-found");
    await expect(page.getByText("demo-shop")).toHaveCount(0);
    await expect(page.getByTestId("generation-timeline")).toHaveCount(0);
    await expect(page.getByTestId("new-change-link")).toHaveCount(0);

    await page.goto(`/projects/${projectId}/candidates`);
    await expect(page.getByTestId("candidate-list")).toContainText("does not exist in this tenant");

    // Naming the demo tenant is refused outright; naming their own finds no such project.
    const asDemo = await trpcQuery(page.request, "projects.overview", { tenantId: DEMO_TENANT, projectId });
    expect(asDemo.status()).toBe(403);
    expect(await trpcErrorCode(asDemo)).toBe("FORBIDDEN");
    const asOwn = await trpcQuery(page.request, "projects.overview", { tenantId: outsiderTenantId, projectId });
    expect(asOwn.status()).toBe(404);
    expect(await trpcErrorCode(asOwn)).toBe("NOT_FOUND");
    const clone = await trpcMutation(page.request, "projects.cloneAccess", { tenantId: DEMO_TENANT, projectId });
    expect(clone.status()).toBe(403);
  } finally {
    await outsider.context.close();
  }
});
