import { type PolicyDocument, RISK_TIERS } from "@rhumbatron/core";

/**
 * One policy document in words: the checks each risk tier requires besides those the project's
 * checks file applies, the tiers behind a person's approval, command and timeout overrides, the
 * rerun budget and the p95 limit. Read-only; the editor shows the same document as JSON.
 */
export function PolicyDocumentView({ document: d }: { document: PolicyDocument }) {
  const commands = Object.entries(d.commands);
  return (
    <dl data-testid="policy-document" className="grid gap-x-6 gap-y-3 text-sm md:grid-cols-[12rem_1fr]">
      <dt className="text-slate-500">Required checks (besides the checks file's)</dt>
      <dd>
        <table className="text-sm">
          <tbody>
            {RISK_TIERS.map((tier) => (
              <tr key={tier} data-testid="policy-tier" data-tier={tier}>
                <td className="pr-4 font-medium">{tier}</td>
                <td className="font-mono text-xs">
                  {d.requiredChecksByRisk[tier].length > 0
                    ? d.requiredChecksByRisk[tier].join(", ")
                    : "what the checks file applies"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </dd>
      <dt className="text-slate-500">Person's approval</dt>
      <dd data-testid="policy-human-gate">
        {d.humanGateRiskTiers.length > 0
          ? `${d.humanGateRiskTiers.join(", ")} risk`
          : "no tier (only Changes that touch authorization)"}
      </dd>
      <dt className="text-slate-500">Commands</dt>
      <dd data-testid="policy-commands">
        {commands.length === 0 ? (
          <span>every check runs the command its checks file gives</span>
        ) : (
          <ul className="space-y-0.5">
            {commands.map(([id, argv]) => (
              <li key={id}>
                <span className="font-medium">{id}</span>{" "}
                <code className="font-mono text-xs [overflow-wrap:anywhere]">{(argv ?? []).join(" ")}</code>
                <span className="text-xs text-slate-500"> (instead of the checks file's)</span>
              </li>
            ))}
            <li className="text-xs text-slate-500">the other checks run the command their checks file gives</li>
          </ul>
        )}
      </dd>
      <dt className="text-slate-500">Timeouts</dt>
      <dd data-testid="policy-timeouts" className="flex flex-wrap gap-1">
        {Object.keys(d.timeoutSeconds).length === 0 && <span>as the checks file gives them</span>}
        {Object.entries(d.timeoutSeconds).map(([id, s]) => (
          <span key={id} className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">
            {id} {s} s
          </span>
        ))}
      </dd>
      <dt className="text-slate-500">Reruns</dt>
      <dd data-testid="policy-rerun-budget">{d.rerunBudget} per check of a Candidate</dd>
      <dt className="text-slate-500">p95 limit</dt>
      <dd data-testid="policy-p95">{d.p95LimitMs} ms (a Change's goal may only tighten it)</dd>
    </dl>
  );
}
