import { describe, expect, it } from "vitest";
import { exampleChange } from "./change-example.ts";
import {
  type ChangeDraft,
  draftToInput,
  emptyDraft,
  emptyTask,
  fieldErrorsOf,
  freshTaskKey,
  removeTask,
  renameTask,
  validateDraft,
} from "./change-form.ts";

const draft = (o: Partial<ChangeDraft> = {}): ChangeDraft => ({
  ...emptyDraft(),
  title: "Add a banner",
  tasks: [{ ...emptyTask("a"), title: "A" }],
  ...o,
});

describe("draftToInput", () => {
  it("turns lines into lists, argv text into words, and an empty goal into none", () => {
    const input = draftToInput(
      draft({
        p95LatencyMs: " 150 ",
        invariants: "one\n\n  two  \n",
        added: "GET /api/banner\n",
        tasks: [
          {
            ...emptyTask(" a "),
            title: "A",
            paths: "src/a.ts\n src/b.ts",
            prefixes: "public/",
            editPlan: [{ op: "run", argv: "  npm run  -s build " }],
          },
        ],
      }),
    );
    expect(input).toMatchObject({
      goals: { p95LatencyMs: 150 },
      invariants: ["one", "two"],
      contractChanges: { added: ["GET /api/banner"], removed: [], changed: [] },
      tasks: [
        {
          key: "a",
          intents: { paths: ["src/a.ts", "src/b.ts"], prefixes: ["public/"] },
          editPlan: [{ op: "run", argv: ["npm", "run", "-s", "build"] }],
        },
      ],
    });
    expect(draftToInput(draft())).toMatchObject({ goals: {}, tasks: [{ key: "a" }] });
    expect((draftToInput(draft()) as { tasks: object[] }).tasks[0]).not.toHaveProperty("editPlan");
  });
});

describe("validateDraft (the core schema and Work Graph rules, as the server applies them)", () => {
  it("accepts a valid draft and returns the parsed input", () => {
    const r = validateDraft(draft());
    expect(r).toMatchObject({ ok: true, input: { title: "Add a banner", riskTier: "medium" } });
  });

  it("reports each problem at its field", () => {
    const r = validateDraft(
      draft({
        title: " ",
        p95LatencyMs: "fast",
        added: "cart",
        tasks: [
          { ...emptyTask("Bad Key"), title: "" },
          { ...emptyTask("b"), title: "B", paths: "../etc/passwd", editPlan: [{ op: "delete", path: "/abs" }] },
        ],
      }),
    );
    if (r.ok) throw new Error("expected problems");
    expect(Object.keys(r.errors).sort()).toEqual([
      "contractChanges.added.0",
      "goals.p95LatencyMs",
      "tasks.0.key",
      "tasks.0.title",
      "tasks.1.editPlan.0.path",
      "tasks.1.intents.paths.0",
      "title",
    ]);
    expect(r.errors["contractChanges.added.0"]).toEqual(["like 'GET /api/items'"]);
  });

  it("reports cycles, dangling dependencies and duplicate keys on the Work Graph", () => {
    const cycle = validateDraft(
      draft({
        tasks: [
          { ...emptyTask("a"), title: "A", dependsOn: ["b"] },
          { ...emptyTask("b"), title: "B", dependsOn: ["a"] },
        ],
      }),
    );
    expect(cycle).toEqual({ ok: false, errors: { tasks: ["the Work Graph has a cycle: a -> b -> a"] } });
    const dangling = validateDraft(
      draft({
        tasks: [
          { ...emptyTask("a"), title: "A", dependsOn: ["zz"] },
          { ...emptyTask("a"), title: "A again" },
        ],
      }),
    );
    expect(dangling).toEqual({
      ok: false,
      errors: {
        tasks: ['duplicate Task key "a"', 'Task "a" depends on "zz", which is not in the Work Graph'],
      },
    });
  });
});

describe("fieldErrorsOf (server issues)", () => {
  it("drops the `change` prefix of change.create's input and keeps other paths whole", () => {
    expect(
      fieldErrorsOf(
        [
          { path: ["change", "tasks", 0, "key"], message: "bad key" },
          { path: ["change", "tasks"], message: "cycle" },
          { path: ["clientRequestId"], message: "too long" },
          { path: ["change", "tasks"], message: "cycle" },
        ],
        ["change"],
      ),
    ).toEqual({ "tasks.0.key": ["bad key"], tasks: ["cycle"], clientRequestId: ["too long"] });
  });
});

describe("editing the Work Graph", () => {
  const graph = draft({
    tasks: [
      { ...emptyTask("a"), title: "A" },
      { ...emptyTask("b"), title: "B", dependsOn: ["a"] },
      { ...emptyTask("task-3"), title: "C", dependsOn: ["a", "b"] },
    ],
  });

  it("renaming a Task renames the dependencies on it", () => {
    const renamed = renameTask(graph, 0, "model");
    expect(renamed.tasks.map((t) => [t.key, t.dependsOn])).toEqual([
      ["model", []],
      ["b", ["model"]],
      ["task-3", ["model", "b"]],
    ]);
  });

  it("removing a Task removes the dependencies on it", () => {
    expect(removeTask(graph, 1).tasks.map((t) => [t.key, t.dependsOn])).toEqual([
      ["a", []],
      ["task-3", ["a"]],
    ]);
  });

  it("picks a key no Task uses yet", () => {
    expect(freshTaskKey(graph)).toBe("task-4");
    expect(freshTaskKey(draft({ tasks: [emptyTask("task-2")] }))).toBe("task-3");
  });
});

describe("the example Change", () => {
  it("is a valid Change", () => {
    expect(validateDraft(exampleChange())).toMatchObject({ ok: true });
  });

  it("applies, step by step in Work Graph order, to an empty repository, and names no project's things", () => {
    const files = new Map<string, string>();
    for (const task of exampleChange().tasks) {
      for (const step of task.editPlan) {
        if (step.op === "write") files.set(step.path, step.content);
        if (step.op !== "replace") continue;
        const before = files.get(step.path) ?? "";
        expect(before, `${task.key}: ${step.path} contains the text to replace`).toContain(step.find);
        files.set(step.path, before.replace(step.find, step.replace));
      }
    }
    expect(files.get("docs/change-requests.md")).toContain("how a reviewer can tell it is done");
    expect(JSON.stringify(exampleChange())).not.toMatch(/wishlist|cart|product/i);
  });
});
