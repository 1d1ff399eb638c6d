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

/**
 * Files that still break a limit, being split one by one. The list only shrinks: a file not on it
 * may break no limit, and a file on it that no longer does must come off it.
 */
const STILL_TO_SPLIT = new Set<string>([
  "apps/web/src/components/metrics/chart-series.test.ts",
  "apps/web/src/components/metrics/checks-panel.tsx",
  "apps/web/src/components/metrics/landing-panel.tsx",
  "apps/web/src/components/metrics/metrics-view.tsx",
  "apps/web/src/components/notifications/inbox.tsx",
  "apps/web/src/components/operations/sandbox-meter.tsx",
  "apps/web/src/components/project/agent-choice-form.tsx",
  "apps/web/src/components/project/clone-access.tsx",
  "apps/web/src/components/project/event-feed.tsx",
  "apps/web/src/components/project/generation-timeline.tsx",
  "apps/web/src/components/project/landing-queue.tsx",
  "apps/web/src/components/project/policy-editor.tsx",
  "apps/web/src/components/project/project-overview.tsx",
  "apps/web/src/components/project/release-target-form.tsx",
  "apps/web/src/components/project/webhooks/delivery-log.tsx",
  "apps/web/src/components/project/webhooks/webhook-list.tsx",
]);

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
    const files = new Set(found.map((line) => line.split(":")[0] ?? ""));
    expect(found.filter((line) => !STILL_TO_SPLIT.has(line.split(":")[0] ?? ""))).toEqual([]);
    expect([...STILL_TO_SPLIT].filter((f) => !files.has(f))).toEqual([]);
  });
});
