import type { Culprit } from "@rhumbatron/core";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { CulpritNotice } from "./change-view.tsx";

const culprit: Culprit = {
  checkId: "tests",
  tests: ["adds two numbers"],
  task: { id: "tsk_c", key: "c", title: "Round the totals", changeSetId: "cs_c", position: 3 },
  of: 4,
  probes: [
    { prefix: 2, evidenceId: "ev_2", failed: false },
    { prefix: 3, evidenceId: "ev_3", failed: true },
  ],
};

describe("the Change page's culprit", () => {
  it("names the Task that broke the check, how it was found, and links the probes' Evidence", () => {
    const html = renderToStaticMarkup(createElement(CulpritNotice, { culprit, href: "/projects/p/candidates/cand_1" }));
    expect(html).toContain('data-task-key="c"');
    expect(html).toContain("Task c broke tests");
    expect(html).toContain(
      "Task c &quot;Round the totals&quot;, ChangeSet 3 of 4, first fails tests (adds two numbers); found in 2 extra runs of tests.",
    );
    expect(html).toContain('href="/projects/p/candidates/cand_1"');
  });

  it("says so when the base itself fails, and shows nothing without a culprit", () => {
    const html = renderToStaticMarkup(
      createElement(CulpritNotice, { culprit: { ...culprit, task: null }, href: null }),
    );
    expect(html).toContain("No Task broke it");
    expect(html).toContain("none of the Change&#x27;s Tasks: the base already fails tests");
    expect(renderToStaticMarkup(createElement(CulpritNotice, { culprit: null, href: null }))).toBe("");
  });
});
