"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { SubmitButton } from "./form-controls.tsx";
import { PushCommand } from "./push-command.tsx";

/** Same rule as the server's `projectName` (packages/db): checked here first so a typo is caught before a round trip. */
const NAME = /^[a-z0-9][a-z0-9-]*$/;

type Source = "template" | "import" | "push";
type Field = "name" | "from" | "branch" | "credentials";
type Problems = Partial<Record<Field, string>>;

/**
 * Creates a project (admins): from the demo template, by importing a repository's history
 * (docs/repositories.md), or empty, waiting for a `git push` whose command (with its
 * one-time token) is shown once below the form. The worker provisions it; the list below shows it
 * `provisioning` at once and refreshes until it is `active` (or `failed`, with the reason). The
 * server's refusals are shown beside the field they name.
 */
export function CreateProjectForm({ tenantId }: { tenantId: string }) {
  const form = useCreateProject(tenantId);
  const { source, problems, pushAccess, pending } = form;
  return (
    <form
      data-testid="create-project-form"
      onSubmit={form.submit}
      noValidate
      className="mb-6 flex flex-wrap items-start gap-3 rounded-lg border border-slate-200 bg-white p-4"
    >
      <SourceChoice source={source} setSource={form.setSource} />
      <FormField
        label="New project"
        testId="project-name-input"
        name="name"
        value={form.fields.name}
        onChange={form.fields.setName}
        placeholder="my-shop"
        error={problems.name}
        errorId="create-project-error"
        className="min-w-64 flex-1"
      />
      {source === "import" && <ImportFields fields={form.fields} problems={problems} />}
      <SubmitButton
        testId="create-project-submit"
        pending={pending}
        pendingLabel={source === "import" ? "Importing…" : "Creating…"}
        className="mt-6"
      >
        {source === "import" ? "Import repository" : source === "push" ? "Create and push" : "Create project"}
      </SubmitButton>
      {pushAccess && <PushCommand access={pushAccess} />}
      <p className="w-full text-xs text-slate-500">
        {source === "push"
          ? "An empty project waits for one git push: the command, with a one-time token, is shown here once. The pushed branch (of several, main, then master) becomes main with its whole history; its status turns active here, or failed with the reason."
          : source === "import"
            ? "An http(s) URL (no user name or password in it: for a private repository fill in the user name and password or token, used for this import only, never stored or shown), a file:// URL or an absolute path on the server. Its branch's whole history becomes main as it is; the worker imports it at S0, and its status turns active here, or failed with the reason."
            : "The worker provisions it from the project template at S0; its status turns from provisioning to active here."}
      </p>
    </form>
  );
}

/** Where the project starts from, its fields, the problems found in them, and the three ways of sending it. */
function useCreateProject(tenantId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [source, setSource] = useState<Source>("template");
  const fields = useProjectFields();
  const { name, from, branch, submodules, username, password } = fields;
  const [problems, setProblems] = useState<Problems>({});
  const [pushAccess, setPushAccess] = useState<{ url: string; command: string; expiresAt: Date } | null>(null);
  const onSuccess = () => {
    fields.setName("");
    fields.setFrom("");
    fields.setBranch("");
    fields.setSubmodules(false);
    fields.setUsername("");
    fields.setPassword("");
    return queryClient.invalidateQueries({ queryKey: trpc.projects.list.queryKey({ tenantId }) });
  };
  const onError = (err: ServerError) => setProblems(problemsOf(err));
  const create = useMutation(trpc.projects.create.mutationOptions({ onSuccess, onError }));
  const importRepo = useMutation(trpc.projects.import.mutationOptions({ onSuccess, onError }));
  const forPush = useMutation(
    trpc.projects.createForPush.mutationOptions({
      onSuccess: (r) => {
        setPushAccess(r);
        return onSuccess();
      },
      onError,
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const trimmed = name.trim();
    const found = problemsBeforeSending(source, trimmed, from, username, password);
    setProblems(found);
    setPushAccess(null);
    if (Object.keys(found).length > 0) return;
    if (source === "template") create.mutate({ tenantId, name: trimmed });
    else if (source === "push") forPush.mutate({ tenantId, name: trimmed });
    else
      importRepo.mutate({
        tenantId,
        name: trimmed,
        from: from.trim(),
        ...(branch.trim() ? { branch: branch.trim() } : {}),
        ...(username.trim() && password ? { credentials: { username: username.trim(), password } } : {}),
        ...(submodules ? { submodules: true } : {}),
      });
  }

  const pending = create.isPending || importRepo.isPending || forPush.isPending;
  return { source, setSource, fields, problems, pushAccess, submit, pending };
}

type ProjectFields = ReturnType<typeof useProjectFields>;

/** The new project's name, and what an import needs: the repository, its branch, its submodules, its credentials. */
function useProjectFields() {
  const [name, setName] = useState("");
  const [from, setFrom] = useState("");
  const [branch, setBranch] = useState("");
  const [submodules, setSubmodules] = useState(false);
  // A private http(s) repository's credentials: sent once with the import, never shown again.
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  return {
    name,
    setName,
    from,
    setFrom,
    branch,
    setBranch,
    submodules,
    setSubmodules,
    username,
    setUsername,
    password,
    setPassword,
  };
}

type ServerError = {
  message: string;
  data?: { zodError?: { path: PropertyKey[]; message: string }[] | null } | null;
};

/** The server's refusal, each problem beside the field it names (the name when it names none). */
function problemsOf(err: ServerError): Problems {
  const issues = err.data?.zodError ?? [];
  if (issues.length === 0) return { name: err.message };
  const next: Problems = {};
  for (const issue of issues) {
    const field = (["from", "branch", "credentials"].includes(String(issue.path[0])) ? issue.path[0] : "name") as Field;
    next[field] ??= issue.message;
  }
  return next;
}

/** The mistakes the browser can see before anything is sent. */
function problemsBeforeSending(
  source: Source,
  trimmed: string,
  from: string,
  username: string,
  password: string,
): Problems {
  const found: Problems = {};
  if (!trimmed || trimmed.length > 100 || !NAME.test(trimmed))
    found.name = "Use lowercase letters, digits and '-', starting with a letter or digit (at most 100).";
  if (source === "import" && !from.trim())
    found.from = "Give the repository: an http(s) URL, a file:// URL or an absolute path on the server.";
  if (source === "import" && (username.trim() === "") !== (password === ""))
    found.credentials = "Give both the user name and the password or token, or neither for a public repository.";
  return found;
}

/** Where the new project starts from: the demo template, an imported repository or a push. */
function SourceChoice({ source, setSource }: { source: Source; setSource: (source: Source) => void }) {
  return (
    <fieldset className="flex w-full flex-wrap gap-4 text-sm">
      <legend className="sr-only">Start from</legend>
      <label className="flex items-center gap-1">
        <input
          type="radio"
          name="source"
          value="template"
          data-testid="project-source-template"
          checked={source === "template"}
          onChange={() => setSource("template")}
        />
        The demo template
      </label>
      <label className="flex items-center gap-1">
        <input
          type="radio"
          name="source"
          value="import"
          data-testid="project-source-import"
          checked={source === "import"}
          onChange={() => setSource("import")}
        />
        Import a repository
      </label>
      <label className="flex items-center gap-1">
        <input
          type="radio"
          name="source"
          value="push"
          data-testid="project-source-push"
          checked={source === "push"}
          onChange={() => setSource("push")}
        />
        Push an existing repository
      </label>
    </fieldset>
  );
}

/** The repository to import, its branch, its credentials and whether to fetch its submodules. */
function ImportFields({ fields, problems }: { fields: ProjectFields; problems: Problems }) {
  return (
    <>
      <FormField
        label="Repository"
        testId="project-import-from"
        name="from"
        value={fields.from}
        onChange={fields.setFrom}
        placeholder="https://git.example.com/team/shop.git"
        error={problems.from}
        errorId="import-from-error"
        className="min-w-80 flex-[2]"
      />
      <FormField
        label="Branch (optional)"
        testId="project-import-branch"
        name="branch"
        value={fields.branch}
        onChange={fields.setBranch}
        placeholder="its HEAD branch"
        error={problems.branch}
        errorId="import-branch-error"
        className="min-w-40"
      />
      <FormField
        label="User name (private repository)"
        testId="project-import-username"
        name="username"
        value={fields.username}
        onChange={fields.setUsername}
        placeholder="none: public"
        error={problems.credentials}
        errorId="import-credentials-error"
        className="min-w-40"
      />
      <FormField
        label="Password or token"
        testId="project-import-password"
        name="password"
        type="password"
        value={fields.password}
        onChange={fields.setPassword}
        placeholder=""
        error={undefined}
        errorId="import-password-error"
        className="min-w-40"
      />
      <label className="mt-6 flex basis-full items-start gap-2 text-sm text-slate-700">
        <input
          type="checkbox"
          data-testid="project-import-submodules"
          name="submodules"
          className="mt-1"
          checked={fields.submodules}
          onChange={(e) => fields.setSubmodules(e.target.checked)}
        />
        <span>
          Fetch its submodules from the URLs in its <span className="font-mono">.gitmodules</span> (off: a submodule
          stays the commit id its tree names, and checks see an empty folder there)
        </span>
      </label>
    </>
  );
}

/** One labelled monospace field of the form, with the server's or the schema's problem beside it. */
function FormField(props: {
  label: string;
  testId: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
  error: string | undefined;
  /** The problem's element ID and test ID. */
  errorId: string;
  className: string;
  type?: "password";
}) {
  return (
    <label className={`flex flex-col gap-1 text-sm ${props.className}`}>
      <span className="font-medium">{props.label}</span>
      <input
        data-testid={props.testId}
        name={props.name}
        type={props.type ?? "text"}
        autoComplete={props.type === "password" ? "new-password" : undefined}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        placeholder={props.placeholder}
        aria-invalid={props.error !== undefined}
        aria-describedby={props.errorId}
        className="rounded border border-slate-300 px-2 py-1 font-mono"
      />
      {props.error && (
        <span id={props.errorId} data-testid={props.errorId} role="alert" className="text-red-800">
          {props.error}
        </span>
      )}
    </label>
  );
}
