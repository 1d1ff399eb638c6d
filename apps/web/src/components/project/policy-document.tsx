import { DEFAULT_COMMANDS, type PolicyDocument, RISK_TIERS } from "@rhumbatron/core";

/**
 * One policy document in words: each risk tier's required checks, the tiers behind a person's
 * approval, the commands, the timeouts, the rerun budget and the p95 limit. Read-only; the editor
 * shows the same document as JSON.
 */
export function PolicyDocumentView({ document: d }: { document: PolicyDocument }) {
  const commands = Object.entries(d.commands);
  return (
    <dl data-testid="policy-document" className="grid gap-x-6 gap-y-3 text-sm md:grid-cols-[12rem_1fr]">
      <dt className="text-slate-500">Required checks</dt>
      <dd>
        <table className="text-sm">
          <tbody>
            {RISK_TIERS.map((tier) => (
              <tr key={tier} data-testid="policy-tier" data-tier={tier}>
                <td className="pr-4 font-medium">{tier}</td>
                <td className="font-mono text-xs">{d.requiredChecksByRisk[tier].join(", ")}</td>
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
          <span>the template's npm scripts for every check</span>
        ) : (
          <ul className="space-y-0.5">
            {commands.map(([id, argv]) => (
              <li key={id}>
                <span className="font-medium">{id}</span>{" "}
                <code className="font-mono text-xs">{(argv ?? []).join(" ")}</code>
                {id in DEFAULT_COMMANDS && (
                  <span className="text-xs text-slate-500">
                    {" "}
                    (instead of {DEFAULT_COMMANDS[id as keyof typeof DEFAULT_COMMANDS].join(" ")})
                  </span>
                )}
              </li>
            ))}
            <li className="text-xs text-slate-500">the other checks run the template's npm scripts</li>
          </ul>
        )}
      </dd>
      <dt className="text-slate-500">Timeouts</dt>
      <dd data-testid="policy-timeouts" className="flex flex-wrap gap-1">
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
