"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady } from "../query-state.tsx";

/** While a run has not recorded its packet yet (it is queued or starting), ask again this often. */
const PACKET_PENDING_REFETCH_MS = 2_000;

const kb = (bytes: number) => `${(bytes / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} KB`;

/**
 * What an Agent run was given to read (docs/agents.md, Context Packets): each item's ID (what a model cites),
 * path, size and why it was picked, the budget it used, and what was picked but did not fit. A
 * recorded packet never changes, so it is read once.
 */
export function RunContextPacket({ tenantId, runId, live }: { tenantId: string; runId: string; live: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.change.contextPacket.queryOptions(
      { tenantId, runId },
      {
        staleTime: Number.POSITIVE_INFINITY,
        refetchInterval: (query) => (live && query.state.data?.packet === null ? PACKET_PENDING_REFETCH_MS : false),
      },
    ),
  );
  if (!q.isSuccess)
    return <NotReady query={q} testId="context-packet" what="the Context Packet" label="Loading the Context Packet…" />;
  const p = q.data.packet;
  if (!p) {
    return (
      <p data-testid="context-packet" data-state="none" className="text-xs text-slate-500">
        {live
          ? "No Context Packet yet: the run records it before the Agent starts reading."
          : "This run recorded no Context Packet."}
      </p>
    );
  }
  return (
    <div data-testid="context-packet" data-state="ready" data-packet-id={p.id} className="space-y-2 text-xs">
      <p className="text-slate-600">
        <span data-testid="context-packet-summary">
          {p.items.length} {p.items.length === 1 ? "file" : "files"}, {kb(p.budget.usedBytes)} of{" "}
          {kb(p.budget.maxBytes)} (at most {p.budget.maxItems} files)
        </span>
        {p.tree && (
          <span className="ml-2 font-mono text-slate-500" title={`tree ${p.tree}`}>
            tree {p.tree.slice(0, 7)}
          </span>
        )}
        {p.indexSource === "built" && (
          <span className="ml-2 text-amber-800">the tree's file index was missing and was built first</span>
        )}
      </p>
      {p.note && <p className="text-slate-600">{p.note}</p>}
      {p.items.length > 0 && (
        <table className="w-full table-fixed border-collapse text-left">
          <thead className="text-slate-500">
            <tr>
              <th className="w-16 py-1 font-normal">ID</th>
              <th className="py-1 font-normal">File</th>
              <th className="w-20 py-1 text-right font-normal">Size</th>
              <th className="py-1 pl-3 font-normal">Why</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {p.items.map((item) => (
              <tr key={item.id} data-testid="context-item" data-item-id={item.id} data-path={item.path}>
                <td className="py-1 font-mono">{item.id}</td>
                <td className="break-all py-1 font-mono" title={`blob ${item.blob}`}>
                  {item.path}
                </td>
                <td className="py-1 text-right tabular-nums">{kb(item.size)}</td>
                <td className="py-1 pl-3 text-slate-600">{item.why}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {p.omitted.length > 0 && (
        <div data-testid="context-omitted">
          <p className="text-slate-600">Picked but over the budget, so not given to the Agent:</p>
          <ul className="list-inside list-disc text-slate-600">
            {p.omitted.map((o) => (
              <li key={o.path}>
                <span className="font-mono">{o.path}</span>: {o.why}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
