"use client";

import { AGENT_PROGRAM_NAMES, AGENT_TIMEOUT_BOUNDS, type AgentChoice, type ProgramAgent } from "@rhumbatron/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";

type Kind = "default" | "scripted" | "model" | "program" | "command";

const KIND_WORDS: Record<Kind, string> = {
  default: "the worker's default (the model when the worker has AGENT_MODEL_URL, else scripted)",
  scripted: "scripted: replays each Task's edit plan",
  model: "model: the tool loop over the worker's model endpoint",
  program: "a coding-agent program the worker installs (Claude Code, Codex, …)",
  command: "a command: a program of the repository or the Sandbox, run in the Task's checkout",
};

const input = "mt-1 w-full rounded border border-slate-300 px-2 py-1 text-sm";

/**
 * The project's default Agent (docs/agents.md, Choosing the Agent), for admins: a kind, then what
 * that kind needs. The server reads it with core's agentChoiceSchema and answers what it refuses
 * beside the form; a program's key is the name of a tenant secret (Settings → Secrets), never the key.
 */
export function AgentChoiceForm({
  tenantId,
  projectId,
  current,
}: {
  tenantId: string;
  projectId: string;
  current: AgentChoice | null;
}) {
  const f = useAgentChoice(tenantId, projectId, current);
  const { kind, setKind, save } = f;

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    save.mutate({ tenantId, projectId, agent: choiceOf(f) });
  }

  const issues = save.error?.data?.zodError as { path: PropertyKey[]; message: string }[] | null | undefined;
  const problem = issues?.length
    ? issues.map((i) => `${i.path.filter((p) => p !== "agent").join(".") || "agent"}: ${i.message}`).join("; ")
    : save.error?.message;

  return (
    <form data-testid="agent-choice-form" onSubmit={onSubmit} className="mt-2 grid gap-2 text-sm sm:grid-cols-2">
      <label className="sm:col-span-2">
        <span className="text-slate-600">Agent</span>
        <select
          data-testid="agent-kind"
          className={input}
          value={kind}
          onChange={(e) => setKind(e.target.value as Kind)}
        >
          {(Object.keys(KIND_WORDS) as Kind[]).map((k) => (
            <option key={k} value={k}>
              {KIND_WORDS[k]}
            </option>
          ))}
        </select>
      </label>
      {kind === "program" && <ProgramFields f={f} />}
      {kind === "command" && <CommandFields f={f} />}
      {(kind === "program" || kind === "command") && <RunLimitFields f={f} />}
      {problem && (
        <p role="alert" data-testid="agent-choice-error" className="text-red-700 sm:col-span-2">
          {problem}
        </p>
      )}
      {save.isSuccess && !save.isPending && (
        <p data-testid="agent-choice-saved" className="text-emerald-700 sm:col-span-2">
          Saved: Tasks started from now on use it.
        </p>
      )}
      <div className="sm:col-span-2">
        <button
          type="submit"
          data-testid="agent-choice-save"
          disabled={save.isPending}
          className="rounded bg-sky-700 px-3 py-1.5 font-medium text-white hover:bg-sky-800 disabled:opacity-50"
        >
          {save.isPending ? "Saving…" : "Save the Agent"}
        </button>
      </div>
    </form>
  );
}

type AgentForm = ReturnType<typeof useAgentChoice>;

/** The form's fields, each starting from the project's current Agent, and the save that sends them. */
function useAgentChoice(tenantId: string, projectId: string, current: AgentChoice | null) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<Kind>(current?.kind ?? "default");
  const program = current?.kind === "program" ? current : null;
  const command = current?.kind === "command" ? current : null;
  const [name, setName] = useState<string>(program?.program ?? AGENT_PROGRAM_NAMES[0]);
  const [model, setModel] = useState(program?.model ?? "");
  const [endpoint, setEndpoint] = useState(program?.endpoint ?? "");
  const [keySecret, setKeySecret] = useState(program?.keySecret ?? "");
  const [maxTokens, setMaxTokens] = useState(program?.maxTokens ? String(program.maxTokens) : "");
  const [argv, setArgv] = useState(command?.argv.join(" ") ?? "");
  const [secrets, setSecrets] = useState(command?.secrets.join(", ") ?? "");
  const [timeout, setTimeoutSeconds] = useState(
    String(program?.timeoutSeconds ?? command?.timeoutSeconds ?? AGENT_TIMEOUT_BOUNDS.default),
  );
  const [outside, setOutside] = useState(program?.allowOutsidePaths ?? command?.allowOutsidePaths ?? false);
  const save = useMutation(
    trpc.projects.setAgent.mutationOptions({
      onSuccess: () =>
        queryClient.invalidateQueries({ queryKey: trpc.projects.overview.queryKey({ tenantId, projectId }) }),
    }),
  );
  return {
    kind,
    setKind,
    name,
    setName,
    model,
    setModel,
    endpoint,
    setEndpoint,
    keySecret,
    setKeySecret,
    maxTokens,
    setMaxTokens,
    argv,
    setArgv,
    secrets,
    setSecrets,
    timeout,
    setTimeoutSeconds,
    outside,
    setOutside,
    save,
  };
}

/** The Agent the form's fields describe; null for the worker's default. */
function choiceOf(f: AgentForm): AgentChoice | null {
  const { kind, name, model, endpoint, keySecret, maxTokens, argv, secrets, timeout, outside } = f;
  const seconds = Number(timeout);
  switch (kind) {
    case "default":
      return null;
    case "scripted":
    case "model":
      return { kind };
    case "program":
      return {
        kind,
        program: name as ProgramAgent["program"],
        model: model.trim(),
        endpoint: endpoint.trim(),
        keySecret: keySecret.trim(),
        timeoutSeconds: seconds,
        ...(maxTokens.trim() ? { maxTokens: Number(maxTokens) } : {}),
        allowOutsidePaths: outside,
      };
    case "command": {
      const words = argv.trim().split(/\s+/).filter(Boolean);
      return {
        kind,
        argv: words as [string, ...string[]],
        timeoutSeconds: seconds,
        allowOutsidePaths: outside,
        secrets: secrets
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      };
    }
  }
}

/** What a coding-agent program needs: which program, its model, the one host it reaches and its key. */
function ProgramFields({ f }: { f: AgentForm }) {
  const { name, setName, model, setModel, endpoint, setEndpoint, keySecret, setKeySecret, maxTokens, setMaxTokens } = f;
  return (
    <>
      <label>
        <span className="text-slate-600">Program</span>
        <select data-testid="agent-program" className={input} value={name} onChange={(e) => setName(e.target.value)}>
          {AGENT_PROGRAM_NAMES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="text-slate-600">Model name</span>
        <input data-testid="agent-model" className={input} value={model} onChange={(e) => setModel(e.target.value)} />
      </label>
      <label>
        <span className="text-slate-600">Model endpoint (the one host the run may reach)</span>
        <input
          data-testid="agent-endpoint"
          className={input}
          value={endpoint}
          placeholder="https://models.example.com"
          onChange={(e) => setEndpoint(e.target.value)}
        />
      </label>
      <label>
        <span className="text-slate-600">Tenant secret holding the API key</span>
        <input
          data-testid="agent-key-secret"
          className={input}
          value={keySecret}
          placeholder="ANTHROPIC_API_KEY"
          onChange={(e) => setKeySecret(e.target.value)}
        />
      </label>
      <label>
        <span className="text-slate-600">Token limit (optional)</span>
        <input
          data-testid="agent-max-tokens"
          className={input}
          inputMode="numeric"
          value={maxTokens}
          onChange={(e) => setMaxTokens(e.target.value)}
        />
      </label>
    </>
  );
}

/** What a command needs: its words and the tenant secrets it is given. */
function CommandFields({ f }: { f: AgentForm }) {
  const { argv, setArgv, secrets, setSecrets } = f;
  return (
    <>
      <label className="sm:col-span-2">
        <span className="text-slate-600">Program and arguments, separated by spaces (no shell reads them)</span>
        <input
          data-testid="agent-argv"
          className={`${input} font-mono`}
          value={argv}
          placeholder="sh tools/agent.sh"
          onChange={(e) => setArgv(e.target.value)}
        />
      </label>
      <label>
        <span className="text-slate-600">Tenant secrets given to it (names, commas between)</span>
        <input
          data-testid="agent-secrets"
          className={input}
          value={secrets}
          onChange={(e) => setSecrets(e.target.value)}
        />
      </label>
    </>
  );
}

/** The wall time of one run and whether it may edit outside its Task's paths, for a program or a command. */
function RunLimitFields({ f }: { f: AgentForm }) {
  const { timeout, setTimeoutSeconds, outside, setOutside } = f;
  return (
    <>
      <label>
        <span className="text-slate-600">Wall time of one run, seconds</span>
        <input
          data-testid="agent-timeout"
          className={input}
          inputMode="numeric"
          value={timeout}
          onChange={(e) => setTimeoutSeconds(e.target.value)}
        />
      </label>
      <label className="flex items-center gap-2 self-end">
        <input
          type="checkbox"
          data-testid="agent-outside"
          checked={outside}
          onChange={(e) => setOutside(e.target.checked)}
        />
        <span className="text-slate-700">may edit outside its Task's declared paths</span>
      </label>
    </>
  );
}
