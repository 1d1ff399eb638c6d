"use client";

import type { PolicyDocument } from "@rhumbatron/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { SubmitButton } from "../form-controls.tsx";

const asText = (d: PolicyDocument) => JSON.stringify(d, null, 2);

/**
 * The policy as JSON, for admins. Saving sends the document with the version it was edited from:
 * the server checks it with the shared schema and answers with the field that is wrong, or CONFLICT
 * when another edit landed first (then "Load the latest" starts again from the active version). Only
 * JSON syntax is checked here, so every other refusal is the server's own words.
 */
export function PolicyEditor({
  tenantId,
  projectId,
  version,
  document,
}: {
  tenantId: string;
  projectId: string;
  version: number;
  document: PolicyDocument;
}) {
  const editor = usePolicyEditor(tenantId, projectId, version, document);
  const { draft, setDraft, setSyntax, base, text, save, submit, conflict, error, state } = editor;
  return (
    <form data-testid="policy-editor" data-state={state} onSubmit={submit} noValidate className="space-y-2 text-sm">
      <p className="text-slate-600">
        Editing from v{base}. Saving makes a new version; Candidates planned under an older version can no longer be
        promoted (their Change gets a new Candidate when canonical moves on).
      </p>
      <textarea
        data-testid="policy-json"
        aria-label="Policy document (JSON)"
        aria-invalid={error !== null}
        value={text}
        onChange={(e) => setDraft({ base, text: e.target.value })}
        spellCheck={false}
        rows={24}
        className="w-full rounded border border-slate-300 p-2 font-mono text-xs"
      />
      <div className="flex flex-wrap items-center gap-2">
        <SubmitButton testId="policy-save" pending={save.isPending} pendingLabel="Saving…" compact>
          Save as a new version
        </SubmitButton>
        {draft && (
          <button
            type="button"
            data-testid="policy-reset"
            onClick={() => {
              setDraft(null);
              setSyntax(null);
              save.reset();
            }}
            className="rounded border border-slate-300 px-3 py-1 hover:bg-slate-50"
          >
            Discard changes
          </button>
        )}
      </div>
      {error && <PolicyProblem error={error} conflict={conflict} editor={editor} />}
      {save.isSuccess && !error && (
        <p role="status" data-testid="policy-saved" className="text-emerald-800">
          {save.data.changed
            ? `Saved as v${save.data.version} (changed ${save.data.changedFields.join(", ")}).`
            : `Unchanged: v${save.data.version} already is this policy.`}
        </p>
      )}
    </form>
  );
}

type PolicyEditorState = ReturnType<typeof usePolicyEditor>;

/** The draft being edited, the version it was edited from, and the save that sends it. */
function usePolicyEditor(tenantId: string, projectId: string, version: number, document: PolicyDocument) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // The text and the version it was edited from; null: the active version, untouched.
  const [draft, setDraft] = useState<{ base: number; text: string } | null>(null);
  const [syntax, setSyntax] = useState<string | null>(null);
  const base = draft?.base ?? version;
  const text = draft?.text ?? asText(document);
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.policy.get.queryKey({ tenantId, projectId }) }),
      queryClient.invalidateQueries(trpc.policy.history.pathFilter()),
    ]);
  const save = useMutation(
    trpc.policy.update.mutationOptions({
      onSuccess: async () => {
        setDraft(null);
        await refresh();
      },
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    save.reset();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setSyntax(`not valid JSON: ${(err as Error).message}`);
      return;
    }
    setSyntax(null);
    // The server checks the document; its 400 names the field that is wrong.
    save.mutate({ tenantId, projectId, document: parsed as PolicyDocument, expectedVersion: base });
  }

  const conflict = save.isError && save.error.data?.code === "CONFLICT";
  const error = syntax ?? (save.isError ? save.error.message : null);
  const state = save.isPending ? "saving" : error ? "error" : save.isSuccess ? "saved" : "idle";
  return { draft, setDraft, setSyntax, base, text, refresh, save, submit, conflict, error, state };
}

/** What is wrong with the draft; on a conflict, the way to start again from the latest version. */
function PolicyProblem({
  error,
  conflict,
  editor: { save, setDraft, refresh },
}: {
  error: string;
  conflict: boolean;
  editor: PolicyEditorState;
}) {
  return (
    <div role="alert" data-testid="policy-error" className="space-y-2 rounded bg-red-50 p-2 text-red-800">
      <p className="whitespace-pre-wrap font-mono text-xs">{error}</p>
      {conflict && (
        <button
          type="button"
          data-testid="policy-load-latest"
          onClick={async () => {
            save.reset();
            setDraft(null);
            await refresh();
          }}
          className="rounded border border-red-300 bg-white px-2 py-1 hover:bg-red-100"
        >
          Load the latest version
        </button>
      )}
    </div>
  );
}
