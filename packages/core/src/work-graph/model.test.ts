import { describe, expect, it } from "vitest";
import { DomainError } from "../errors.ts";
import { changeInput, validateWorkGraph } from "./model.ts";

const t = (key: string, dependsOn: string[] = []) => ({ key, dependsOn });

function problems(tasks: { key: string; dependsOn: string[] }[]): string[] {
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
  ])("rejects %s", (_name, input) => {
    expect(changeInput.safeParse(input).success).toBe(false);
  });
});
