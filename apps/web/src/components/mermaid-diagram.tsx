"use client";

import { useEffect, useId, useRef, useState } from "react";

type MermaidApi = typeof import("mermaid")["default"];

let loaded: Promise<MermaidApi> | undefined;

/** Mermaid is large and browser-only: loaded on first use, set up once per tab. */
function loadMermaid(): Promise<MermaidApi> {
  loaded ??= import("mermaid").then(({ default: mermaid }) => {
    mermaid.initialize({
      startOnLoad: false,
      // Labels are sanitised and click handlers are off: node text comes from users (Task titles).
      securityLevel: "strict",
      theme: "neutral",
      fontFamily: "ui-sans-serif, system-ui, sans-serif",
      flowchart: { htmlLabels: true, curve: "basis" },
    });
    return mermaid;
  });
  return loaded;
}

let renders = 0;

/**
 * A mermaid diagram rendered in the browser. `data-state` is `loading`, `ready` or `error`; on an
 * error the source is shown as text, so the page still says what it would have drawn.
 */
export function MermaidDiagram({ source, label, testId }: { source: string; label: string; testId: string }) {
  const target = useRef<HTMLDivElement>(null);
  const baseId = useId().replace(/[^a-zA-Z0-9]/g, "");
  const [state, setState] = useState<{ kind: "loading" } | { kind: "ready" } | { kind: "error"; message: string }>({
    kind: "loading",
  });

  useEffect(() => {
    let cancelled = false;
    renders += 1;
    const id = `mermaid-${baseId}-${renders}`;
    loadMermaid()
      .then((mermaid) => mermaid.render(id, source))
      .then(({ svg, bindFunctions }) => {
        if (cancelled || !target.current) return;
        // Mermaid's own output under securityLevel "strict" (sanitised by its DOMPurify step).
        target.current.innerHTML = svg;
        bindFunctions?.(target.current);
        setState({ kind: "ready" });
      })
      .catch((err: unknown) => {
        // A failed render can leave mermaid's scratch element behind.
        document.getElementById(`d${id}`)?.remove();
        if (!cancelled) setState({ kind: "error", message: err instanceof Error ? err.message : String(err) });
      });
    return () => {
      cancelled = true;
    };
  }, [source, baseId]);

  return (
    <figure data-testid={testId} data-state={state.kind} aria-label={label} className="overflow-x-auto">
      {state.kind === "loading" && <p className="animate-pulse text-sm text-slate-500">Drawing {label}…</p>}
      {state.kind === "error" && (
        <div role="alert" className="text-sm text-red-800">
          <p>
            Could not draw {label}: {state.message}
          </p>
          <pre className="mt-2 overflow-auto rounded bg-slate-100 p-2 font-mono text-xs text-slate-700">{source}</pre>
        </div>
      )}
      <div ref={target} role="img" aria-label={label} className={state.kind === "ready" ? "" : "hidden"} />
    </figure>
  );
}
