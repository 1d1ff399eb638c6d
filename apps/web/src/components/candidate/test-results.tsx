/** One test's outcome as the check's report gave it (apps/worker/src/verification/reports.ts). */
interface TestOutcomeView {
  id: string;
  name: string;
  suite: string[];
  file: string | null;
  status: "passed" | "failed" | "skipped";
  durationMs: number | null;
  message: string | null;
}

const isTestOutcome = (t: unknown): t is TestOutcomeView =>
  !!t && typeof t === "object" && typeof (t as TestOutcomeView).name === "string";

/** Each test of the record's report, failing first with its message; the passing ones folded. */
export function TestResults({ tests }: { tests: unknown }) {
  if (!Array.isArray(tests)) return null;
  const all = tests.filter(isTestOutcome);
  const failing = all.filter((t) => t.status === "failed");
  const rest = all.filter((t) => t.status !== "failed");
  const label = (t: TestOutcomeView) => [...t.suite, t.name].join(" › ");
  return (
    <div data-testid="evidence-tests" className="mt-1">
      {failing.length > 0 && (
        <ul className="space-y-1">
          {failing.map((t) => (
            <li key={t.id} data-testid="evidence-test-failed" className="rounded bg-red-50 p-1">
              <span className="font-medium text-red-800">✗ {label(t)}</span>
              {t.file && <span className="text-slate-500"> ({t.file})</span>}
              {t.message && (
                <pre className="mt-0.5 max-h-32 overflow-auto whitespace-pre-wrap font-mono text-[11px] text-red-900">
                  {t.message}
                </pre>
              )}
            </li>
          ))}
        </ul>
      )}
      {rest.length > 0 && (
        <details className="mt-1">
          <summary className="cursor-pointer text-slate-600">
            {rest.filter((t) => t.status === "passed").length} passed,{" "}
            {rest.filter((t) => t.status === "skipped").length} skipped: show each test
          </summary>
          <ul data-testid="evidence-tests-rest" className="mt-1 max-h-64 overflow-auto">
            {rest.map((t) => (
              <li key={t.id} data-status={t.status}>
                {t.status === "passed" ? "✓" : "–"} {label(t)}
                {t.durationMs !== null && <span className="text-slate-500"> {Math.round(t.durationMs)} ms</span>}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
