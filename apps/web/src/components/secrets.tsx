"use client";

import { SECRET_NAME_PATTERN } from "@rhumbatron/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { ConfirmButton } from "./confirm-button.tsx";
import { DataTable } from "./data-table.tsx";
import { Field, SubmitButton, TextInput } from "./form-controls.tsx";
import { ActionError } from "./notice.tsx";
import { Empty, NotReady, Panel } from "./query-state.tsx";
import { Time } from "./time.tsx";

/**
 * An admin's view of the tenant's secrets (docs/agents.md, Secrets): set one (the value goes in a password
 * field, is sent once and cleared), see which are set, when and by whom, delete one. No value is
 * ever on this page: the API has none to give.
 */
export function Secrets({ tenantId }: { tenantId: string }) {
  return (
    <div className="space-y-6">
      <SetSecret tenantId={tenantId} />
      <SecretTable tenantId={tenantId} />
    </div>
  );
}

function useInvalidateList(tenantId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.secrets.list.queryKey({ tenantId }) });
}

function SetSecret({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateList(tenantId);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const set = useMutation(
    trpc.secrets.set.mutationOptions({
      onSuccess: () => {
        setName("");
        setValue("");
        void invalidate();
      },
    }),
  );
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    set.mutate({ tenantId, name, value });
  }
  return (
    <Panel title="Set a secret">
      <form data-testid="secret-set-form" onSubmit={onSubmit} className="flex flex-wrap items-end gap-3">
        <Field label="Name">
          <TextInput
            data-testid="secret-set-name"
            value={name}
            onChange={(e) => setName(e.target.value.toUpperCase())}
            required
            maxLength={64}
            pattern={SECRET_NAME_PATTERN.source}
            title="An environment variable's name: A-Z first, then A-Z, 0-9 or _"
            placeholder="ANTHROPIC_API_KEY"
            autoComplete="off"
            spellCheck={false}
            className="w-64 font-mono"
          />
        </Field>
        <Field label="Value">
          <TextInput
            data-testid="secret-set-value"
            type="password"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            required
            autoComplete="new-password"
            spellCheck={false}
            className="w-80 font-mono"
          />
        </Field>
        <SubmitButton testId="secret-set-submit" pending={set.isPending} pendingLabel="Saving…">
          Save secret
        </SubmitButton>
      </form>
      <p className="mt-2 text-xs text-slate-500">
        Saved encrypted and never shown again, here or anywhere. Runs started from then on get it as an environment
        variable of this name. Saving a name that is already set replaces its value.
      </p>
      {set.isSuccess && (
        <p data-testid="secret-set-done" className="mt-3 text-sm text-emerald-800">
          {set.data.created ? "Set" : "Replaced"} {set.data.name}.
        </p>
      )}
      {set.isError && (
        <ActionError testId="secret-set-error" className="mt-3">
          {set.error.message}
        </ActionError>
      )}
    </Panel>
  );
}

function SecretTable({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateList(tenantId);
  const secrets = useQuery(trpc.secrets.list.queryOptions({ tenantId }));
  const remove = useMutation(trpc.secrets.delete.mutationOptions({ onSettled: () => void invalidate() }));
  if (!secrets.isSuccess)
    return <NotReady query={secrets} testId="secrets-table" what="secrets" label="Loading secrets…" />;
  if (secrets.data.length === 0) return <Empty testId="secrets-table">No secrets yet</Empty>;
  return (
    <Panel title="Secrets">
      {remove.isError && (
        <ActionError testId="secret-error" className="mb-3">
          {remove.error.message}
        </ActionError>
      )}
      <DataTable testId="secrets-table" columns={["Name", "Set", "By", ""]}>
        {secrets.data.map((s) => (
          <tr key={s.name} data-testid="secret-row" data-name={s.name}>
            <td className="py-2 pr-3 font-mono font-medium">{s.name}</td>
            <td className="py-2 pr-3 text-slate-600">
              <Time value={s.updatedAt} />
            </td>
            <td className="py-2 pr-3 text-slate-600">{s.setBy ? s.setBy.email : "a removed user"}</td>
            <td className="py-2 text-right">
              <ConfirmButton
                label="Delete"
                pendingLabel="Deleting…"
                testId="secret-delete"
                confirmTestId="secret-delete-confirm"
                question={`Delete ${s.name}? Runs started from now on no longer get it.`}
                tone="red"
                pending={remove.isPending && remove.variables?.name === s.name}
                onConfirm={() => remove.mutate({ tenantId, name: s.name })}
              />
            </td>
          </tr>
        ))}
      </DataTable>
    </Panel>
  );
}
