"use client";

import { ROLE_ORDER, roleRank } from "@rhumbatron/api/roles";
import type { Role } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { DataTable } from "./data-table.tsx";
import { Field, OptionSelect, SubmitButton, TextInput } from "./form-controls.tsx";
import { ActionError } from "./notice.tsx";
import { Empty, NotReady, Panel } from "./query-state.tsx";
import { SecretShownOnce } from "./secret-shown-once.tsx";

const when = (d: Date | null) => (d ? d.toLocaleString() : "never");

/** Create (name + role, the secret shown once), list and revoke the caller's API tokens in one tenant. */
export function ApiTokens({ tenantId, role }: { tenantId: string; role: Role }) {
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  return (
    <div className="space-y-6">
      <CreateToken tenantId={tenantId} role={role} onCreated={setCreated} />
      {created && (
        <SecretShownOnce
          testId="new-token"
          secretTestId="new-token-secret"
          secret={created.secret}
          noun="token"
          onDone={() => setCreated(null)}
        >
          Token “{created.name}” created.
        </SecretShownOnce>
      )}
      <TokenList tenantId={tenantId} isAdmin={role === "admin"} />
    </div>
  );
}

function CreateToken({
  tenantId,
  role,
  onCreated,
}: {
  tenantId: string;
  role: Role;
  onCreated: (c: { name: string; secret: string }) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [tokenRole, setTokenRole] = useState<Role>("viewer");
  const create = useMutation(
    trpc.tokens.create.mutationOptions({
      onSuccess: (result) => {
        onCreated({ name: result.token.name, secret: result.secret });
        setName("");
        void queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey({ tenantId }) });
      },
    }),
  );
  const allowed = ROLE_ORDER.filter((r) => roleRank(r) <= roleRank(role));
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ tenantId, name, role: tokenRole });
  }
  return (
    <Panel title="New token">
      <form data-testid="create-token" onSubmit={onSubmit} className="flex flex-wrap items-end gap-3">
        <Field label="Name">
          <TextInput
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={100}
            placeholder="e.g. CI pipeline"
            className="w-64"
          />
        </Field>
        <Field label="Role">
          <OptionSelect name="role" options={allowed} value={tokenRole} onChange={setTokenRole} />
        </Field>
        <SubmitButton pending={create.isPending} pendingLabel="Creating…">
          Create token
        </SubmitButton>
      </form>
      {create.isError && (
        <ActionError testId="create-token-error" className="mt-3">
          {create.error.message}
        </ActionError>
      )}
    </Panel>
  );
}

function TokenList({ tenantId, isAdmin }: { tenantId: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.tokens.list.queryOptions({ tenantId }));
  const revoke = useMutation(
    trpc.tokens.revoke.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey({ tenantId }) }),
    }),
  );
  const title = isAdmin ? "Tokens in this tenant" : "Your tokens";
  if (!tokens.isSuccess) return <NotReady query={tokens} testId="token-list" what="tokens" label="Loading tokens…" />;
  if (tokens.data.length === 0) return <Empty testId="token-list">No API tokens yet</Empty>;
  return (
    <Panel title={title}>
      {revoke.isError && <ActionError className="mb-3">Could not revoke: {revoke.error.message}</ActionError>}
      <DataTable
        testId="token-list"
        columns={["Name", "Token", "Role", isAdmin && "Owner", "Created", "Last used", ""]}
      >
        {tokens.data.map((t) => (
          <tr key={t.id} data-testid="token-row" data-revoked={t.revokedAt ? "true" : "false"}>
            <td className="py-2 pr-3 font-medium">{t.name}</td>
            <td className="py-2 pr-3 font-mono text-xs text-slate-600">{t.prefix}…</td>
            <td className="py-2 pr-3">{t.role}</td>
            {isAdmin && <td className="py-2 pr-3 text-slate-600">{t.userEmail}</td>}
            <td className="py-2 pr-3 text-slate-600">{when(t.createdAt)}</td>
            <td className="py-2 pr-3 text-slate-600">{when(t.lastUsedAt)}</td>
            <td className="py-2 text-right">
              {t.revokedAt ? (
                <span className="text-xs text-slate-500">revoked {when(t.revokedAt)}</span>
              ) : (
                <button
                  type="button"
                  data-testid="revoke-token"
                  disabled={revoke.isPending && revoke.variables?.tokenId === t.id}
                  onClick={() => revoke.mutate({ tenantId, tokenId: t.id })}
                  className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50 disabled:opacity-60"
                >
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </Panel>
  );
}
