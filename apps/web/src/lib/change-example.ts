import type { ChangeDraft } from "./change-form.ts";

/**
 * The shape of a request, for any project: a title, a description of what changes and why, a risk
 * tier, an invariant, and two Tasks where the second depends on the first, each with the paths it
 * may touch and a scripted edit plan. It names nothing of any project: it adds one new file under
 * docs/ and then extends it, so it applies to every repository.
 */
export function exampleChange(): ChangeDraft {
  const path = "docs/change-requests.md";
  const first = "# How to ask for a change\n\nSay what should be different, and why.\n";
  return {
    title: "Docs: explain how to ask for a change",
    description:
      "Adds a short page under docs/ that says what a good change request holds: what should be different, why, and how to tell it is done.",
    riskTier: "low",
    p95LatencyMs: "",
    invariants: "Existing behaviour is unchanged",
    added: "",
    removed: "",
    changed: "",
    tasks: [
      {
        key: "page",
        title: "Write the page",
        dependsOn: [],
        paths: path,
        prefixes: "",
        editPlan: [{ op: "write", path, content: first }],
      },
      {
        key: "done",
        title: "Say how to tell it is done",
        dependsOn: ["page"],
        paths: path,
        prefixes: "",
        editPlan: [
          {
            op: "replace",
            path,
            find: "and why.\n",
            replace: "and why.\nThen say how a reviewer can tell it is done.\n",
          },
        ],
      },
    ],
  };
}
