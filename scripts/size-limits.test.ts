import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { productFiles } from "./lib/product-files.ts";
import { ROOT } from "./lib/stack.ts";

/**
 * Sizes a reader can hold in their head (ARCHITECTURE.md, Sizes): no product file over 400 lines and
 * no function over 80, counting from its first line to its last. A function inside another counts on
 * its own too; the outer one's count includes it.
 */
const FILE_LINES = 400;
const FUNCTION_LINES = 80;

function oversized(path: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > FILE_LINES) found.push(`${path}: ${lines} lines`);
  const source = ts.createSourceFile(
    path,
    text,
    ts.ScriptTarget.Latest,
    true,
    path.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > FUNCTION_LINES)
        found.push(`${path}:${first + 1}: a function of ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function fn(name: string, bodyLines: number): string {
  return `export function ${name}() {\n${"  x();\n".repeat(bodyLines)}}\n`;
}

describe("sizes", () => {
  it("finds a planted long function, arrow function and file (the check can fail)", () => {
    expect(oversized("a.ts", fn("ok", 78))).toEqual([]);
    expect(oversized("a.ts", fn("long", 79))).toEqual(["a.ts:1: a function of 81 lines"]);
    const arrow = `const f = () => {\n${"  x();\n".repeat(79)}};\n`;
    expect(oversized("b.tsx", arrow)).toEqual(["b.tsx:1: a function of 81 lines"]);
    const file = Array.from({ length: 6 }, (_, i) => fn(`f${i}`, 70)).join("");
    expect(oversized("c.ts", file)).toEqual(["c.ts: 432 lines"]);
  });

  it(`no product file is over ${FILE_LINES} lines and no function over ${FUNCTION_LINES}`, () => {
    const found = productFiles().flatMap((f) => oversized(f, readFileSync(join(ROOT, f), "utf8")));
    expect(found).toEqual([]);
  });
});
