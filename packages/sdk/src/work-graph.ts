import { type ChangeInput, changeInput, DomainError, validateWorkGraph } from "@rhumbatron/core";
import type { z } from "zod";
import { formatIssues, type InputIssue, RhumbatronError } from "./errors.ts";

/** A Change with its Work Graph as written by hand (defaults may be left out). */
export type ChangeDraft = z.input<typeof changeInput>;

/**
 * Checks a Change and its Work Graph with the same rules as the server (`changeInput` from core,
 * then `validateWorkGraph`: duplicate keys, dangling or self dependencies, cycles), so a bad file
 * is refused before any request and nothing is written. `source` names the input in the message.
 */
export function parseChange(value: unknown, source = "the Work Graph"): ChangeInput {
  const parsed = changeInput.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
    throw invalid(source, issues);
  }
  try {
    validateWorkGraph(parsed.data.tasks);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const problems = (err.details?.problems as string[] | undefined) ?? [err.message];
    throw invalid(
      source,
      problems.map((message) => ({ path: "tasks", message })),
    );
  }
  return parsed.data;
}

/** `parseChange` for JSON text (a file's content); text that is not JSON is refused the same way. */
export function parseChangeJson(text: string, source = "the Work Graph"): ChangeInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(source, [{ path: "", message: `not valid JSON (${(err as Error).message})` }]);
  }
  return parseChange(value, source);
}

function invalid(source: string, issues: InputIssue[]): RhumbatronError {
  return new RhumbatronError(
    "BAD_REQUEST",
    `${source} is not a valid Change: ${formatIssues(issues)}; fix it and try again (nothing was sent)`,
    { issues },
  );
}
