"use client";

import { useMutation } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";

/**
 * `git clone` for the project's canonical source. Each click issues a new read token (600 s); the
 * command is shown with a copy button and the time the token stops working. Push is never offered.
 */
export function CloneAccess({ tenantId, projectId, active }: { tenantId: string; projectId: string; active: boolean }) {
  const trpc = useTRPC();
  const access = useMutation(trpc.projects.cloneAccess.mutationOptions());
  const [copied, setCopied] = useState(false);
  const [now, setNow] = useState(() => Date.now());
  const expiresAt = access.data?.expiresAt;

  useEffect(() => {
    if (!expiresAt) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [expiresAt]);

  if (!active) {
    return (
      <p data-testid="clone-access" data-state="unavailable" className="text-sm text-slate-500">
        The repository can be cloned once the project is active.
      </p>
    );
  }
  const expired = expiresAt ? expiresAt.getTime() <= now : false;
  const secondsLeft = expiresAt ? Math.max(0, Math.round((expiresAt.getTime() - now) / 1000)) : 0;

  async function copy(text: string) {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2_000);
    } catch {
      setCopied(false);
    }
  }

  return (
    <div
      data-testid="clone-access"
      data-state={access.data ? (expired ? "expired" : "ready") : "idle"}
      className="space-y-2"
    >
      {access.data && !expired ? (
        <CloneCommand data={access.data} copied={copied} copy={copy} secondsLeft={secondsLeft} />
      ) : (
        <>
          {expired && <p className="text-xs text-amber-800">The token has expired: ask for a new one.</p>}
          <button
            type="button"
            data-testid="clone-url-button"
            disabled={access.isPending}
            onClick={() => access.mutate({ tenantId, projectId })}
            className="rounded border border-slate-300 px-3 py-1.5 text-sm hover:bg-slate-100 disabled:opacity-50"
          >
            {access.isPending ? "Issuing a token…" : "Show git clone command"}
          </button>
        </>
      )}
      {access.isError && (
        <p role="alert" data-testid="clone-url-error" className="text-sm text-red-800">
          {access.error.message}
        </p>
      )}
    </div>
  );
}

/** The clone command with its copy button, and how long its read-only token still works. */
function CloneCommand({
  data,
  copied,
  copy,
  secondsLeft,
}: {
  data: { url: string; command: string; expiresAt: Date };
  copied: boolean;
  copy: (text: string) => Promise<void>;
  secondsLeft: number;
}) {
  return (
    <>
      <div className="flex items-stretch gap-2">
        <code
          data-testid="clone-url"
          data-url={data.url}
          className="min-w-0 flex-1 overflow-x-auto whitespace-nowrap rounded bg-slate-900 px-3 py-2 font-mono text-xs text-slate-100"
        >
          {data.command}
        </code>
        <button
          type="button"
          data-testid="copy-clone-url"
          onClick={() => void copy(data.command)}
          className="shrink-0 rounded border border-slate-300 px-2 text-sm hover:bg-slate-100"
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="text-xs text-slate-500">
        Read-only token, valid for another {secondsLeft} s (until {data.expiresAt.toLocaleTimeString()}).
      </p>
    </>
  );
}
