import { describe, expect, it } from "vitest";
import { PATCH_MAX_BYTES } from "../config.ts";
import { DomainError } from "../errors.ts";
import { changeInput, validateWorkGraph } from "./model.ts";

const t = (key: string, dependsOn: string[] = []) => ({ key, dependsOn });

function problems(tasks: { key: string; dependsOn: string[]; agent?: unknown; attempts?: unknown }[]): string[] {
  try {
    validateWorkGraph(tasks);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("INVALID_INPUT");
    return ((err as DomainError).details?.problems as string[]) ?? [];
  }
}

describe("validateWorkGraph", () => {
  it("takes attempts on one Task nothing depends on, and names every other use of them", () => {
    const attempts = { agents: [{ kind: "scripted" }, { kind: "model" }], pick: "person" };
    expect(problems([t("a"), { ...t("b", ["a"]), attempts }])).toEqual([]);
    expect(
      problems([
        { ...t("a"), attempts },
        { ...t("b"), attempts },
      ]),
    ).toEqual(["only one Task of a Change may ask for attempts (a, b do)"]);
    expect(problems([{ ...t("a"), attempts }, t("b", ["a"])])).toEqual([
      'Task "a" asks for attempts but b depends on it: only a Task nothing depends on may',
    ]);
    expect(problems([{ ...t("a"), attempts, agent: { kind: "scripted" } }])).toEqual([
      'Task "a" names an agent and attempts: name its Agents in attempts only',
    ]);
  });

  it("reads attempts: 2 to 4 Agents, picked by a person unless a rule is named", () => {
    const task = (attempts: unknown) => ({
      title: "x",
      riskTier: "low",
      tasks: [{ key: "a", title: "a", attempts }],
    });
    const read = changeInput.parse(task({ agents: [{ kind: "scripted" }, { kind: "scripted" }] }));
    expect(read.tasks[0]?.attempts).toEqual({ agents: [{ kind: "scripted" }, { kind: "scripted" }], pick: "person" });
    expect(changeInput.safeParse(task({ agents: [{ kind: "scripted" }] })).success).toBe(false);
    expect(changeInput.safeParse(task({ agents: Array(5).fill({ kind: "scripted" }) })).success).toBe(false);
    expect(
      changeInput.safeParse(task({ agents: [{ kind: "scripted" }, { kind: "scripted" }], pick: "luck" })).success,
    ).toBe(false);
  });

  it("accepts a DAG", () => {
    expect(problems([t("a"), t("b", ["a"]), t("c", ["a"]), t("d", ["b", "c"])])).toEqual([]);
  });

  it("names a cycle", () => {
    expect(problems([t("a", ["c"]), t("b", ["a"]), t("c", ["b"])])).toEqual([
      "the Work Graph has a cycle: a -> c -> b -> a",
    ]);
  });

  it("names dangling and self dependencies and duplicate keys", () => {
    expect(problems([t("a", ["zz"]), t("b", ["b"]), t("a")])).toEqual([
      'duplicate Task key "a"',
      'Task "a" depends on "zz", which is not in the Work Graph',
      'Task "b" depends on itself',
    ]);
  });
});

describe("changeInput", () => {
  const base = { title: "Add a wishlist", riskTier: "medium", tasks: [{ key: "api", title: "API" }] };

  it("fills defaults", () => {
    const c = changeInput.parse(base);
    expect(c).toMatchObject({
      description: "",
      goals: {},
      invariants: [],
      contractChanges: { added: [], removed: [], changed: [] },
    });
    expect(c.tasks[0]).toMatchObject({ dependsOn: [], intents: { paths: [], prefixes: [] } });
  });

  it.each([
    ["an over-long title", { ...base, title: "x".repeat(201) }],
    ["an unknown risk tier", { ...base, riskTier: "extreme" }],
    ["no tasks", { ...base, tasks: [] }],
    ["a bad task key", { ...base, tasks: [{ key: "Has Space", title: "x" }] }],
    [
      "a path escaping the repository",
      { ...base, tasks: [{ key: "a", title: "x", intents: { paths: ["../etc/passwd"] } }] },
    ],
    ["an absolute path", { ...base, tasks: [{ key: "a", title: "x", intents: { paths: ["/etc"] } }] }],
    ["a bad route", { ...base, contractChanges: { added: ["cart"] } }],
    ["a NUL in the title", { ...base, title: "Add\u0000" }],
    ["a NUL in an invariant", { ...base, invariants: ["cart\u0000"] }],
    ["a NUL in a route", { ...base, contractChanges: { added: ["GET /api/\u0000"] } }],
    [
      "a NUL in written content",
      { ...base, tasks: [{ key: "a", title: "x", editPlan: [{ op: "write", path: "a.txt", content: "\u0000" }] }] },
    ],
  ])("rejects %s", (_name, input) => {
    expect(changeInput.safeParse(input).success).toBe(false);
  });

  const withPath = (path: string) => ({
    ...base,
    tasks: [{ key: "a", title: "x", editPlan: [{ op: "write", path, content: "x" }] }],
  });

  it.each([".git/hooks/pre-commit", "..\\..\\win", "C:/x", "src/.GIT/config", "a//b"])(
    "refuses the task path %j, naming it",
    (path) => {
      const r = changeInput.safeParse(withPath(path));
      expect(r.success).toBe(false);
      expect(r.error?.issues).toEqual([
        expect.objectContaining({
          path: ["tasks", 0, "editPlan", 0, "path"],
          message: expect.stringContaining(JSON.stringify(path)),
        }),
      ]);
    },
  );

  it("refuses bad paths in the intents too", () => {
    const r = changeInput.safeParse({
      ...base,
      tasks: [{ key: "a", title: "x", intents: { paths: [".git/config"], prefixes: ["../up/"] } }],
    });
    expect(r.error?.issues.map((i) => i.path.join("."))).toEqual([
      "tasks.0.intents.paths.0",
      "tasks.0.intents.prefixes.0",
    ]);
  });

  it("refuses an edit plan that writes more than one ChangeSet patch holds (512 KB)", () => {
    const half = "x".repeat(PATCH_MAX_BYTES / 2);
    const plan = (extra: string) => [
      { op: "write", path: "a.txt", content: half },
      { op: "replace", path: "b.txt", find: "y", replace: half + extra },
    ];
    expect(changeInput.safeParse({ ...base, tasks: [{ key: "a", title: "x", editPlan: plan("") }] }).success).toBe(
      true,
    );
    const r = changeInput.safeParse({ ...base, tasks: [{ key: "a", title: "x", editPlan: plan("é") }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({ path: ["tasks", 0, "editPlan"] });
    expect(r.error?.issues[0]?.message).toContain("512 KB");
  });
});
