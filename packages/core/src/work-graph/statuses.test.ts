import { describe, expect, it } from "vitest";
import { CANDIDATE_STATUSES, CANDIDATE_TRANSITIONS } from "../verification/candidate-status.ts";
import { TASK_STATES } from "./model.ts";
import {
  AGENT_RUN_STATUSES,
  AGENT_RUN_TRANSITIONS,
  CHANGE_STATUSES,
  CHANGE_TRANSITIONS,
  RELEASE_STATUSES,
  RELEASE_TRANSITIONS,
  TASK_TRANSITIONS,
} from "./statuses.ts";

const tables = [
  ["Change", CHANGE_STATUSES, CHANGE_TRANSITIONS],
  ["Task", TASK_STATES, TASK_TRANSITIONS],
  ["Agent run", AGENT_RUN_STATUSES, AGENT_RUN_TRANSITIONS],
  ["Candidate", CANDIDATE_STATUSES, CANDIDATE_TRANSITIONS],
  ["release", RELEASE_STATUSES, RELEASE_TRANSITIONS],
] as const;

describe("status tables", () => {
  it.each(tables)("%s: every status has its moves, and every move names a status", (_, statuses, moves) => {
    expect(Object.keys(moves).sort()).toEqual([...statuses].sort());
    for (const to of Object.values(moves).flat()) expect(statuses as readonly string[]).toContain(to);
  });

  it.each(tables)("%s: every status can be reached from the first one", (_, statuses, moves) => {
    const seen = new Set<string>([statuses[0]]);
    const todo: string[] = [statuses[0]];
    while (todo.length) {
      const from = todo.pop() ?? "";
      for (const to of (moves as Record<string, readonly string[]>)[from] ?? []) {
        if (!seen.has(to)) {
          seen.add(to);
          todo.push(to);
        }
      }
    }
    expect([...seen].sort()).toEqual([...statuses].sort());
  });
});
