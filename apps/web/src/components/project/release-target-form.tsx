"use client";

import { type ReleaseTarget, releaseTargetSchema } from "@rhumbatron/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { SubmitButton } from "../form-controls.tsx";
import { describeReleaseTarget } from "./release-target.ts";

type Kind = ReleaseTarget["kind"];

/** The target the form's fields describe; blank folder path means the default folder. */
function targetOf(kind: Kind, path: string, url: string): unknown {
  if (kind === "folder") return path.trim() ? { kind, path: path.trim() } : { kind };
  if (kind === "webhook") return { kind, url: url.trim() };
  return { kind };
}

/**
 * Where the project's future promotions are released (admins). Checked in the browser with the
 * same schema the server and the worker use, so a relative path or a non-http URL is refused here
 * with the server's own words. Releases already started keep the target they started with.
 */
export function ReleaseTargetForm({
  tenantId,
  projectId,
  current,
}: {
  tenantId: string;
  projectId: string;
  current: ReleaseTarget | null;
}) {
  const form = useReleaseTarget(tenantId, projectId, current);
  const { save, submit, error } = form;
  return (
    <form
      data-testid="release-target-form"
      data-state={save.isPending ? "saving" : error ? "error" : save.isSuccess ? "saved" : "idle"}
      onSubmit={submit}
      // The shared schema's messages, not the browser's, say what to give.
      noValidate
      className="space-y-2 rounded border border-slate-200 bg-slate-50 p-3 text-sm"
    >
      <p data-testid="release-target-current" data-kind={current?.kind ?? ""} className="text-slate-600">
        Current target: <span className="font-mono text-xs">{describeReleaseTarget(current)}</span>
      </p>
      <div className="flex flex-wrap items-end gap-2">
        <TargetFields form={form} />
        <SubmitButton testId="release-target-save" pending={save.isPending} pendingLabel="Saving…" compact>
          Save target
        </SubmitButton>
      </div>
      <p className="text-xs text-slate-500">
        Applies to future promotions only: releases already started keep the target they started with.
      </p>
      {error && (
        <p role="alert" data-testid="release-target-error" className="whitespace-pre-wrap text-red-800">
          {error}
        </p>
      )}
      {save.isSuccess && !error && (
        <p role="status" data-testid="release-target-saved" className="text-emerald-800">
          {save.data.changed ? "Saved: the next promotion releases there." : "Unchanged: that is already the target."}
        </p>
      )}
    </form>
  );
}

type ReleaseTargetState = ReturnType<typeof useReleaseTarget>;

/** The form's fields, starting from the current target, the problem with them if any, and the save that sends them. */
function useReleaseTarget(tenantId: string, projectId: string, current: ReleaseTarget | null) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<Kind>(current?.kind ?? "folder");
  const [path, setPath] = useState(current?.kind === "folder" ? (current.path ?? "") : "");
  const [url, setUrl] = useState(current?.kind === "webhook" ? current.url : "");
  const [invalid, setInvalid] = useState<string | null>(null);
  const save = useMutation(
    trpc.projects.setReleaseTarget.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.projects.releases.queryKey() }),
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    save.reset();
    const parsed = releaseTargetSchema.safeParse(targetOf(kind, path, url));
    if (!parsed.success) {
      setInvalid(parsed.error.issues.map((i) => i.message).join("; "));
      return;
    }
    setInvalid(null);
    save.mutate({ tenantId, projectId, target: parsed.data });
  }

  const error = invalid ?? (save.isError ? save.error.message : null);
  return { kind, setKind, path, setPath, url, setUrl, invalid, setInvalid, save, submit, error };
}

/** The kind of target, then the folder path or the webhook URL it needs. */
function TargetFields({ form }: { form: ReleaseTargetState }) {
  const { kind, setKind, path, setPath, url, setUrl, invalid, setInvalid } = form;
  return (
    <>
      <label className="flex flex-col gap-1">
        <span className="text-xs text-slate-500">Release to</span>
        <select
          data-testid="release-target-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value as Kind);
            setInvalid(null);
          }}
          className="rounded border border-slate-300 bg-white px-2 py-1"
        >
          <option value="folder">a folder on the worker host</option>
          <option value="webhook">a webhook</option>
          <option value="none">nowhere (no releases)</option>
        </select>
      </label>
      {kind === "folder" && (
        <label className="flex min-w-64 flex-1 flex-col gap-1">
          <span className="text-xs text-slate-500">Absolute folder path (blank: the default folder)</span>
          <input
            data-testid="release-target-path"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder="<data dir>/releases/<project>/<generation>/"
            aria-invalid={invalid !== null}
            className="rounded border border-slate-300 px-2 py-1 font-mono text-xs"
          />
        </label>
      )}
      {kind === "webhook" && (
        <label className="flex min-w-64 flex-1 flex-col gap-1">
          <span className="text-xs text-slate-500">Webhook URL (http or https; receives a POST per release)</span>
          <input
            data-testid="release-target-url"
            type="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://deploy.example.com/hooks/release"
            aria-invalid={invalid !== null}
            className="rounded border border-slate-300 px-2 py-1 font-mono text-xs"
          />
        </label>
      )}
    </>
  );
}
