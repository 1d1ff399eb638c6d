import type { ReleaseTarget } from "@rhumbatron/core";

/** A release target in words, as the Releases panel and the target form show it. */
export function describeReleaseTarget(target: ReleaseTarget | null): string {
  if (!target) return "an unreadable target";
  switch (target.kind) {
    case "folder":
      return target.path ? `folder ${target.path}` : "folder <data dir>/releases/<project>/<generation>/ (default)";
    case "webhook":
      return `webhook ${target.url}`;
    case "none":
      return "nowhere (releases off)";
  }
}
