"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { SubmitButton } from "./form-controls.tsx";

/** Same rule as the server's `projectName` (packages/db): checked here first so a typo is caught before a round trip. */
const NAME = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Creates a project (admins). The worker provisions it from the template; the list below shows it
 * `provisioning` at once and refreshes until it is `active`.
 */
export function CreateProjectForm({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation(
    trpc.projects.create.mutationOptions({
      onSuccess: () => {
        setName("");
        return queryClient.invalidateQueries({ queryKey: trpc.projects.list.queryKey({ tenantId }) });
      },
      onError: (err) => setProblem(err.data?.zodError?.[0]?.message ?? err.message),
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100 || !NAME.test(trimmed)) {
      setProblem("Use lowercase letters, digits and '-', starting with a letter or digit (at most 100).");
      return;
    }
    setProblem(null);
    create.mutate({ tenantId, name: trimmed });
  }

  return (
    <form
      data-testid="create-project-form"
      onSubmit={submit}
      noValidate
      className="mb-6 flex flex-wrap items-start gap-3 rounded-lg border border-slate-200 bg-white p-4"
    >
      <label className="flex min-w-64 flex-1 flex-col gap-1 text-sm">
        <span className="font-medium">New project</span>
        <input
          data-testid="project-name-input"
          name="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="my-shop"
          aria-invalid={problem !== null}
          aria-describedby="create-project-error"
          className="rounded border border-slate-300 px-2 py-1 font-mono"
        />
        {problem && (
          <span id="create-project-error" data-testid="create-project-error" role="alert" className="text-red-800">
            {problem}
          </span>
        )}
      </label>
      <SubmitButton testId="create-project-submit" pending={create.isPending} pendingLabel="Creating…" className="mt-6">
        Create project
      </SubmitButton>
      <p className="w-full text-xs text-slate-500">
        The worker provisions it from the project template at S0; its status turns from provisioning to active here.
      </p>
    </form>
  );
}
