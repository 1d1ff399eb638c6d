import { describe, expect, it } from "vitest";
import { outsidePathGaps, pathsOutside } from "./declared-paths.ts";

describe("pathsOutside", () => {
  it("keeps what no declared path or prefix covers, by whole segments", () => {
    const intents = { paths: ["src/app.ts", "docs/"], prefixes: ["lib"] };
    expect(
      pathsOutside(["src/app.ts", "src/application.ts", "docs/a.md", "lib/x/y.ts", "library.ts", "README.md"], intents),
    ).toEqual(["src/application.ts", "library.ts", "README.md"]);
  });

  it("finds nothing outside a Task that declares no path", () => {
    expect(pathsOutside(["anything.ts"], { paths: [], prefixes: [] })).toEqual([]);
  });
});

describe("outsidePathGaps", () => {
  it("is one gap per ChangeSet with edits outside, naming its Task and the paths", () => {
    expect(
      outsidePathGaps([
        { id: "cs_1", taskKey: "a", outsidePaths: [] },
        { id: "cs_2", taskKey: "b", outsidePaths: ["README.md", "x.ts"] },
      ]),
    ).toEqual([
      {
        checkId: "declared-paths",
        satisfied: false,
        gap: "outside_paths",
        evidenceId: "cs_2",
        detail:
          "Task b edited outside its declared paths: README.md, x.ts (retry it, or allow its Agent to edit outside its paths)",
        excerpt: [],
      },
    ]);
  });
});
