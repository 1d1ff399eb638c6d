import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TestItem } from "./flaky-tests.tsx";

const row = {
  checkId: "tests",
  testId: "cart > adds",
  name: "cart > adds",
  status: "flaky",
  since: "2026-12-01T10:00:00Z",
  rate: "flaky on 2 of 9 runs",
  failedRuns: 0,
  delayed: ["cand_00000000000000000000000000000001"],
  delayedCount: 1,
  quarantine: null,
};
const actions = { pending: false, quarantine: () => {}, release: () => {} };
const render = (over: object, a: typeof actions | null = actions) =>
  renderToStaticMarkup(createElement(TestItem, { test: { ...row, ...over }, projectId: "proj_1", actions: a }));

describe("a project's flaky tests", () => {
  it("shows the rate and the Candidates a flaky test held up, and asks an admin for a reason to quarantine it", () => {
    const html = render({});
    expect(html).toContain('data-status="flaky"');
    expect(html).toContain("flaky on 2 of 9 runs, 0 failed");
    expect(html).toContain("held up 1 Candidate");
    expect(html).toContain('href="/projects/proj_1/candidates/cand_00000000000000000000000000000001"');
    // The button waits for a reason.
    expect(html).toMatch(/data-testid="flaky-test-quarantine-submit" disabled=""/);
    expect(render({}, null)).not.toContain("Quarantine</button>");
  });

  it("says who quarantined a test, why and until when, and offers to take it out", () => {
    const q = {
      owner: "admin@acme.test",
      reason: "clock-dependent; #12",
      expiresAt: "2026-12-20T00:00:00Z",
      auto: false,
    };
    const html = render({ quarantine: q });
    expect(html).toContain('data-quarantined="true"');
    expect(html).toContain("Quarantined by admin@acme.test until");
    expect(html).toContain("clock-dependent; #12. Its failures do not block");
    expect(html).toContain("Take out of quarantine");
    expect(render({ quarantine: { ...q, auto: true } })).toContain("Quarantined by the policy until");
  });
});
