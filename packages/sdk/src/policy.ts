import { type PolicyDocument, policyDocumentSchema } from "@rhumbatron/core";
import { formatIssues, type InputIssue, RhumbatronError } from "./errors.ts";

/** A policy file: a bare document, or what `policy show --json` prints (its version is the one edited). */
export interface PolicyFile {
  document: PolicyDocument;
  /** From a `policy show --json` file: the version it was read at, so an edit made meanwhile is refused. */
  expectedVersion?: number;
}

/**
 * Checks a project policy with the server's own schema (core's policyDocumentSchema), so a bad one
 * is refused before any request with the fields that are wrong, and nothing is written. `source`
 * names the input in the message.
 */
export function parsePolicy(value: unknown, source = "the policy"): PolicyDocument {
  const parsed = policyDocumentSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path
        .map((k) => (typeof k === "number" ? `[${k}]` : String(k)))
        .join(".")
        .replace(/\.\[/g, "["),
      message: i.message,
    }));
    throw invalid(source, issues);
  }
  return parsed.data;
}

/** `parsePolicy` for a file's JSON text: a bare document, or `policy show --json` output with its version. */
export function parsePolicyJson(text: string, source = "the policy"): PolicyFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(source, [{ path: "", message: `not valid JSON (${(err as Error).message})` }]);
  }
  const shown = value as { document?: unknown; version?: unknown } | null;
  if (shown && typeof shown === "object" && "document" in shown) {
    const document = parsePolicy(shown.document, source);
    const v = shown.version;
    return Number.isInteger(v) && (v as number) > 0 ? { document, expectedVersion: v as number } : { document };
  }
  return { document: parsePolicy(value, source) };
}

function invalid(source: string, issues: InputIssue[]): RhumbatronError {
  return new RhumbatronError(
    "BAD_REQUEST",
    `${source} is not a valid policy: ${formatIssues(issues)}; fix it and try again (nothing was sent)`,
    { issues },
  );
}
