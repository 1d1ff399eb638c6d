"use client";

import type { AppRouter } from "@rhumbatron/api";
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { type FormEvent, type ReactNode, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";

const MAX_QUERY = 200;

/**
 * Search in the project's code: the search index of the newest indexed generation (built after
 * each promotion). Every word of the query must be on the line, each matching the start of an
 * identifier or word (camelCase and snake_case parts count), case-insensitive.
 */
export function CodeSearch({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const [text, setText] = useState("");
  const [query, setQuery] = useState<string | null>(null);
  const search = useQuery(
    trpc.projects.search.queryOptions({ tenantId, projectId, query: query ?? "" }, { enabled: query !== null }),
  );

  let state: ResultState;
  if (query === null) state = { kind: "idle" };
  else if (search.isPending) state = { kind: "loading" };
  else if (search.isError) state = { kind: "error", message: search.error.message };
  else state = { kind: "ready", data: search.data };

  function submit(e: FormEvent) {
    e.preventDefault();
    const q = text.trim();
    // The same words again search again: a promotion may have indexed a newer generation since.
    if (q === query) void search.refetch();
    else setQuery(q.length > 0 ? q : null);
  }

  return (
    <div className="space-y-3">
      <form onSubmit={submit} className="flex gap-2" aria-label="Search the code">
        <input
          data-testid="code-search-input"
          value={text}
          onChange={(e) => setText(e.target.value)}
          maxLength={MAX_QUERY}
          placeholder="Search the code, e.g. addToCart"
          aria-label="Search the code"
          className="min-w-0 flex-1 rounded border border-slate-300 px-2 py-1 font-mono text-sm"
        />
        <button
          type="submit"
          data-testid="code-search-submit"
          disabled={text.trim().length === 0 || (search.isFetching && query === text.trim())}
          className="rounded border border-slate-300 px-3 py-1 text-sm hover:bg-slate-100 disabled:opacity-50"
        >
          Search
        </button>
      </form>
      <Results state={state} onRetry={() => void search.refetch()} />
    </div>
  );
}

type Data = inferRouterOutputs<AppRouter>["projects"]["search"];
type ResultState =
  | { kind: "idle" }
  | { kind: "loading" }
  | { kind: "error"; message: string }
  | { kind: "ready"; data: Data };

function Results({ state, onRetry }: { state: ResultState; onRetry: () => void }) {
  const box = (s: string, children: ReactNode, className = "text-sm text-slate-500") => (
    <div data-testid="code-search-results" data-state={s} className={className}>
      {children}
    </div>
  );
  if (state.kind === "idle") return box("idle", "Type a word or identifier and search.");
  if (state.kind === "loading") return box("loading", "Searching…", "animate-pulse text-sm text-slate-500");
  if (state.kind === "error") {
    return box(
      "error",
      <span role="alert">
        Could not search: {state.message}{" "}
        <button type="button" onClick={onRetry} className="underline">
          Try again
        </button>
      </span>,
      "text-sm text-red-800",
    );
  }
  const d = state.data;
  if (!d.indexed) return box("not-indexed", d.message, "text-sm text-amber-900");
  if (d.hits.length === 0) return box("empty", `No line of S${d.generation} matches.`);
  return (
    <div data-testid="code-search-results" data-state="ready" data-total={d.total} className="space-y-1 text-sm">
      <p className="text-xs text-slate-500">
        {d.total === d.hits.length ? `${d.total}` : `First ${d.hits.length} of ${d.total}`} matching line
        {d.total === 1 ? "" : "s"} in S{d.generation}{" "}
        <code title={d.tree} className="font-mono">
          (tree {d.tree.slice(0, 10)})
        </code>
      </p>
      <ol className="divide-y divide-slate-100 font-mono text-xs">
        {d.hits.map((h) => (
          <li
            key={`${h.path}:${h.line}`}
            data-testid="code-search-hit"
            data-path={h.path}
            data-line={h.line}
            className="py-1"
          >
            {h.path}:{h.line}
          </li>
        ))}
      </ol>
    </div>
  );
}
