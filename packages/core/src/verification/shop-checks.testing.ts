import { readFileSync } from "node:fs";
import { type DeclaredCheck, parseChecksFile } from "./checks-file.ts";
import type { ProjectChecks } from "./plan.ts";

/**
 * For tests of the plan, the gate and the policy: the demo shop's own checks file
 * (templates/shop/.rhumbatron/checks.yml) as the worker would read it at a base commit.
 */
export function shopChecks(commit = "0".repeat(40)): ProjectChecks {
  const path = new URL("../../../../templates/shop/.rhumbatron/checks.yml", import.meta.url);
  const r = parseChecksFile(readFileSync(path, "utf8"));
  if (!r.ok) throw new Error(`the shop's checks file does not parse: ${JSON.stringify(r.problems)}`);
  return { source: { kind: "file", path: ".rhumbatron/checks.yml", commit }, file: r.file };
}

/**
 * For tests of the declared-steps procedure (`procedure: browser`, browser-check.ts): a browser check
 * as a project that drives its page by steps declares it, here the wishlist and cart flow on the
 * shop's page. The shop itself runs its own Playwright tests (`procedure: playwright`); a test of
 * the steps mechanism gives this check instead of the shop's.
 */
export const STEPS_BROWSER_CHECK = `version: 1
checks:
  - id: browser
    about: the wishlist and cart flow in Chromium, at high risk
    procedure: browser
    run: [node, dist/src/server.js]
    when:
      - tiers: [high, critical]
    timeout: 90
    steps:
      - goto: /
      - see: css=body[data-ready="true"]
      - screenshot: loaded
      - click: add-to-wishlist-mug
      - see: wishlist-item-mug
      - click: move-to-cart-mug
      - see: cart-item-mug
      - gone: wishlist-item-mug
      - see: css=[data-testid="cart-total"]:not(:empty)
`;

/** STEPS_BROWSER_CHECK's one check, as the checks file's parser reads it. */
export function stepsBrowserCheck(): DeclaredCheck {
  const r = parseChecksFile(STEPS_BROWSER_CHECK);
  const check = r.ok ? r.file.checks[0] : undefined;
  if (!check) throw new Error(`the steps browser check does not parse: ${JSON.stringify(!r.ok && r.problems)}`);
  return check;
}

/** `project`'s checks with its `browser` check replaced by (or, without one, joined by) stepsBrowserCheck(). */
export function withStepsBrowserCheck(project: ProjectChecks): ProjectChecks {
  const others = project.file.checks.filter((c) => c.id !== "browser");
  return { source: project.source, file: { ...project.file, checks: [...others, stepsBrowserCheck()] } };
}
