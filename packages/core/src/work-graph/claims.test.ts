import { describe, expect, it } from "vitest";
import { challengesFor } from "./claims.ts";

describe("challengesFor", () => {
  const claim = { taskId: "task_b", agentId: "agt_b", paths: ["src/shared.ts", "src/b.ts"] };

  it("raises one challenge per holder that names a claimed path exactly, listing the shared paths", () => {
    const out = challengesFor(claim, [
      { taskId: "task_a", agentId: "agt_a", held: { paths: ["src/b.ts", "src/shared.ts", "x.ts"], prefixes: [] } },
      { taskId: "task_c", agentId: "agt_c", held: { paths: ["src/shared.ts/"], prefixes: [] } },
    ]);
    expect(out.map((c) => [c.heldBy.taskId, c.paths])).toEqual([
      ["task_a", ["src/b.ts", "src/shared.ts"]],
      ["task_c", ["src/shared.ts/"]],
    ]);
  });

  it("raises none for a prefix-only overlap, a path that merely shares a name, or the claimant itself", () => {
    expect(
      challengesFor(claim, [
        { taskId: "task_p", agentId: "agt_p", held: { paths: [], prefixes: ["src/"] } },
        { taskId: "task_n", agentId: "agt_n", held: { paths: ["src/shared.tsx", "src"], prefixes: [] } },
        { taskId: "task_b", agentId: "agt_b", held: { paths: ["src/shared.ts"], prefixes: [] } },
      ]),
    ).toEqual([]);
  });
});
