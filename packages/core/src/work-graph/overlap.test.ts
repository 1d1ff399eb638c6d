import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pathWithin, resourceOverlap } from "./overlap.ts";

const segment = fc.stringMatching(/^[a-z]{1,4}$/);
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));

describe("resource overlap", () => {
  it("classifies by whole path segments", () => {
    expect(resourceOverlap(["src/cart/total.ts"], { paths: ["src/cart/total.ts"], prefixes: [] }).kind).toBe("exact");
    expect(resourceOverlap(["src/cart/total.ts"], { paths: [], prefixes: ["src/cart/"] }).kind).toBe("prefix");
    expect(resourceOverlap(["src/cart"], { paths: ["src/cart/total.ts"], prefixes: [] }).kind).toBe("prefix");
    expect(resourceOverlap(["src/cartography.ts"], { paths: [], prefixes: ["src/cart"] }).kind).toBe("none");
    expect(resourceOverlap(["docs/a.md"], { paths: ["src/a.md"], prefixes: ["src/"] }).kind).toBe("none");
  });

  it("exact wins over prefix", () => {
    const o = resourceOverlap(["src/a.ts", "src/b.ts"], { paths: ["src/b.ts"], prefixes: ["src/"] });
    expect(o).toEqual({ kind: "exact", pairs: [{ eventPath: "src/b.ts", agentPath: "src/b.ts" }] });
  });

  it("property: a path overlaps itself exactly, and is symmetric in kind", () => {
    fc.assert(
      fc.property(fc.array(path, { minLength: 1, maxLength: 4 }), fc.array(path, { maxLength: 4 }), (a, b) => {
        expect(resourceOverlap(a, { paths: a, prefixes: [] }).kind).toBe("exact");
        const ab = resourceOverlap(a, { paths: b, prefixes: [] }).kind;
        const ba = resourceOverlap(b, { paths: a, prefixes: [] }).kind;
        expect(ab).toBe(ba);
      }),
    );
  });

  it("property: none means no path of one side lies within a path of the other", () => {
    fc.assert(
      fc.property(
        fc.array(path, { maxLength: 5 }),
        fc.array(path, { maxLength: 5 }),
        fc.array(path, { maxLength: 3 }),
        (ev, held, pre) => {
          const kind = resourceOverlap(ev, { paths: held, prefixes: pre }).kind;
          const related = ev.some((e) => [...held, ...pre].some((h) => pathWithin(e, h) || pathWithin(h, e)));
          expect(kind === "none").toBe(!related);
        },
      ),
    );
  });

  it("property: adding a prefix never turns an overlap into none", () => {
    fc.assert(
      fc.property(fc.array(path, { maxLength: 5 }), fc.array(path, { maxLength: 5 }), path, (ev, held, extra) => {
        const before = resourceOverlap(ev, { paths: held, prefixes: [] }).kind;
        const after = resourceOverlap(ev, { paths: held, prefixes: [extra] }).kind;
        if (before !== "none") expect(after).not.toBe("none");
        if (before === "exact") expect(after).toBe("exact");
      }),
    );
  });
});
