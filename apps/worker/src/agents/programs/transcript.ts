import type { TranscriptStep } from "@rhumbatron/core";

export type { TranscriptStep };

/** A tool input as one line, cut to `max` characters (the transcript shows it, it does not replay it). */
export function summarize(input: unknown, max = 200): string {
  const text = typeof input === "string" ? input : JSON.stringify(input ?? null);
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The lines of a JSON-lines stream that parse as objects; anything else becomes an error step. */
export function jsonLines(stdout: string): { events: Record<string, unknown>[]; errors: TranscriptStep[] } {
  const events: Record<string, unknown>[] = [];
  const errors: TranscriptStep[] = [];
  for (const line of stdout.split("\n")) {
    const t = line.trim();
    if (!t) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) events.push(v as Record<string, unknown>);
      else errors.push({ kind: "error", message: `not an event: ${summarize(t)}` });
    } catch {
      errors.push({ kind: "error", message: `not JSON: ${summarize(t)}` });
    }
  }
  return { events, errors };
}
