import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cruise, type IRegularForbiddenRuleType } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./lib/stack.ts";

/**
 * Every rule of .dependency-cruiser.cjs (ARCHITECTURE.md: The rooms) against a planted violation:
 * a file at `from` imports `to` in a tree of its own, and depcruise, run with the repository's rules,
 * must report that rule for it. A rule that silently stops matching (a renamed folder, a broken
 * regular expression) fails here; a new rule fails until it has a case. `allowed` imports of the
 * same shape must pass: a rule that matches everything is as wrong as one that matches nothing.
 */
const config = createRequire(import.meta.url)(join(ROOT, ".dependency-cruiser.cjs")) as {
  forbidden: IRegularForbiddenRuleType[];
  options: { exclude: { path: string }; enhancedResolveOptions: { extensions: string[] } };
};

interface Plant {
  from: string;
  /** What `from` imports: a path in the tree (created as an empty module) or a node module (`node:fs`). */
  to: string;
  /** The import statement; default `import * as m from "<to>"; export const x = m;`. */
  importAs?: "value" | "type";
}

const VIOLATIONS: Record<string, Plant[]> = {
  "no-circular": [{ from: "packages/db/src/a.ts", to: "packages/db/src/b.ts" }],
  "packages-never-import-apps": [{ from: "packages/api/src/p.ts", to: "apps/worker/src/q.ts" }],
  "core-stays-pure": [
    { from: "packages/core/src/p.ts", to: "packages/db/src/q.ts" },
    { from: "packages/core/src/p.ts", to: "packages/runtime/src/q.ts" },
    { from: "packages/core/src/p.ts", to: "packages/sdk/src/q.ts" },
  ],
  "core-does-not-import-node-io": [
    { from: "packages/core/src/p.ts", to: "node:fs" },
    { from: "packages/core/src/p.ts", to: "node:child_process" },
  ],
  "runtime-knows-no-domain": [
    { from: "packages/runtime/src/queues/p.ts", to: "packages/db/src/index.ts" },
    { from: "packages/runtime/src/p.ts", to: "apps/worker/src/q.ts" },
  ],
  "db-front-door": [
    { from: "apps/worker/src/p.ts", to: "packages/db/src/generated/prisma/client.ts" },
    { from: "packages/api/src/p.ts", to: "packages/db/src/work-graph/q.ts" },
    { from: "scripts/p.ts", to: "packages/db/src/client.ts" },
  ],
  "db-below-api-and-sdk": [{ from: "packages/db/src/p.ts", to: "packages/api/src/q.ts" }],
  "api-below-sdk": [{ from: "packages/api/src/p.ts", to: "packages/sdk/src/q.ts" }],
  "sdk-takes-only-types-from-api": [{ from: "packages/sdk/src/p.ts", to: "packages/api/src/q.ts" }],
  "sdk-does-not-import-db": [{ from: "packages/sdk/src/p.ts", to: "packages/db/src/q.ts" }],
  "fixtures-are-test-support": [{ from: "apps/worker/src/p.ts", to: "packages/fixtures/src/q.ts" }],
  "fixtures-stand-alone": [{ from: "packages/fixtures/src/p.ts", to: "packages/core/src/q.ts" }],
  "product-code-never-imports-test-support": [
    { from: "apps/worker/src/source/p.ts", to: "packages/db/src/testing/index.ts" },
    { from: "packages/db/src/p.ts", to: "packages/core/src/verification/q.testing.ts" },
    { from: "apps/worker/src/main.ts", to: "apps/worker/src/test-world.ts" },
  ],
  "worker-imports-core-and-db": [
    { from: "apps/worker/src/p.ts", to: "packages/api/src/q.ts" },
    { from: "apps/worker/src/p.ts", to: "apps/web/src/q.ts" },
  ],
  "web-takes-only-the-workers-nudger-and-registry": [
    { from: "apps/web/src/server/p.ts", to: "apps/worker/src/sandbox/q.ts" },
    { from: "apps/web/src/server/p.ts", to: "packages/sdk/src/q.ts" },
  ],
  "e2e-uses-public-surfaces": [
    { from: "e2e/support/p.ts", to: "scripts/lib/stack.ts" },
    { from: "e2e/specs/p.spec.ts", to: "apps/worker/src/q.ts" },
    { from: "e2e/support/p.ts", to: "packages/db/src/q.ts" },
  ],
  "scripts-do-not-import-e2e": [{ from: "scripts/p.ts", to: "e2e/support/q.ts" }],
  "db-areas-point-down": areaPlants("db"),
  "runtime-areas-point-down": areaPlants("runtime"),
};

/**
 * A package's area order is one rule a layer (and one for the files at its src/): for each, every
 * area of the layer imports the first area the rule forbids it (a peer, else the next layer up).
 */
function areaPlants(pkg: "db" | "runtime"): Plant[] {
  const pattern = new RegExp(`^\\^packages\\/${pkg}\\/src\\/\\(([^)]+)\\)\\/$`);
  const areas = (re: unknown) => pattern.exec(String(re))?.[1]?.split("|") ?? [];
  return config.forbidden
    .filter((r) => r.name === `${pkg}-areas-point-down`)
    .flatMap((r) => {
      const to = areas(r.to.path);
      const from = areas(r.from.path);
      if (from.length === 0) return [{ from: `packages/${pkg}/src/p.ts`, to: `packages/${pkg}/src/${to[0]}/q.ts` }];
      // The top layer's only area has no peer and nothing above it to import: no plant for it.
      return from.flatMap((f) => {
        const target = to.find((t) => t !== f);
        return target ? [{ from: `packages/${pkg}/src/${f}/p.ts`, to: `packages/${pkg}/src/${target}/q.ts` }] : [];
      });
    });
}

/** Imports the rules allow, each next to a rule it could be mistaken for. */
const ALLOWED: Plant[] = [
  { from: "packages/sdk/src/p.ts", to: "packages/api/src/q.ts", importAs: "type" },
  { from: "packages/sdk/src/p.test.ts", to: "packages/db/src/testing/index.ts" },
  { from: "apps/web/src/server/p.ts", to: "apps/worker/src/nudger.ts" },
  { from: "apps/web/src/server/p.ts", to: "apps/worker/src/index.ts" },
  { from: "apps/worker/src/p.test.ts", to: "packages/fixtures/src/q.ts" },
  { from: "apps/worker/src/source/p.testing.ts", to: "packages/db/src/testing/index.ts" },
  { from: "packages/core/src/p.testing.ts", to: "node:fs" },
  { from: "e2e/support/p.ts", to: "packages/core/src/q.ts" },
  { from: "e2e/support/p.ts", to: "packages/fixtures/src/q.ts" },
  { from: "scripts/p.ts", to: "apps/worker/src/q.ts" },
  { from: "packages/db/src/index.ts", to: "packages/db/src/verification/q.ts" },
  { from: "packages/db/src/verification/p.ts", to: "packages/db/src/queries/q.ts" },
  { from: "packages/db/src/queues/p.ts", to: "packages/db/src/events/q.ts" },
  { from: "packages/db/src/source/p.ts", to: "packages/db/src/commands/q.ts" },
  { from: "packages/db/src/verification/p.test.ts", to: "packages/db/src/landing/q.ts" },
  { from: "apps/worker/src/p.ts", to: "packages/db/src/index.ts" },
  { from: "apps/worker/src/p.ts", to: "packages/runtime/src/index.ts" },
  { from: "packages/db/src/work-graph/p.ts", to: "packages/runtime/src/index.ts" },
  { from: "packages/runtime/src/events/p.test.ts", to: "packages/db/src/testing/index.ts" },
  { from: "packages/runtime/src/queues/p.ts", to: "packages/runtime/src/leases/q.ts" },
  { from: "apps/worker/src/p.test.ts", to: "packages/db/src/testing/index.ts" },
];

const trees: string[] = [];
afterAll(() => {
  for (const t of trees) rmSync(t, { recursive: true, force: true });
});

function write(root: string, path: string, text: string) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** Plants `plant` in a fresh tree and returns the rules depcruise reports for its `from` file. */
async function reported(plant: Plant): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), "rh-deps-"));
  trees.push(root);
  const toModule = plant.to.startsWith("node:");
  const specifier = toModule ? plant.to : relativeImport(plant.from, plant.to);
  const statement =
    plant.importAs === "type"
      ? `import type { T } from "${specifier}";\nexport type U = T;\n`
      : `import * as m from "${specifier}";\nexport const x = m;\n`;
  write(root, plant.from, statement);
  if (!toModule) {
    // A cycle back to `from` for no-circular's case; otherwise a module that imports nothing.
    const back = VIOLATIONS["no-circular"]?.some((p) => p.to === plant.to)
      ? `import * as m from "${relativeImport(plant.to, plant.from)}";\nexport const y = m;\n`
      : "export type T = number;\nexport const y = 1;\n";
    write(root, plant.to, back);
  }
  const top = [...new Set([plant.from, plant.to].filter((p) => !p.startsWith("node:")).map((p) => p.split("/")[0]))];
  const result = await cruise(
    top as string[],
    {
      baseDir: root,
      ruleSet: { forbidden: config.forbidden },
      exclude: config.options.exclude,
      tsPreCompilationDeps: true,
      validate: true,
    },
    { extensions: config.options.enhancedResolveOptions.extensions },
  );
  if (typeof result.output === "string") throw new Error("depcruise returned text, not a cruise result");
  return result.output.summary.violations.filter((v) => v.from === plant.from).map((v) => v.rule.name);
}

function relativeImport(from: string, to: string): string {
  const up = from.split("/").length - 1;
  return `${"../".repeat(up)}${to}`;
}

describe("the dependency rules", () => {
  it("has a planted violation for every rule in .dependency-cruiser.cjs", () => {
    expect(Object.keys(VIOLATIONS).sort()).toEqual([...new Set(config.forbidden.map((r) => r.name))].sort());
    expect(VIOLATIONS["db-areas-point-down"]?.length).toBeGreaterThan(10);
  });

  for (const [rule, plants] of Object.entries(VIOLATIONS)) {
    for (const plant of plants) {
      it(`${rule}: ${plant.from} -> ${plant.to} is reported`, async () => {
        expect(await reported(plant)).toContain(rule);
      });
    }
  }

  for (const plant of ALLOWED) {
    it(`allows ${plant.from} -> ${plant.to}${plant.importAs === "type" ? " (types only)" : ""}`, async () => {
      expect(await reported(plant)).toEqual([]);
    });
  }
});
