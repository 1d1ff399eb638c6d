import type { AgentProgramName } from "./install.ts";
import type { TranscriptStep } from "./transcript.ts";

// What every coding-agent program's preset (presets.ts) is made of, and how they read their output.

/**
 * How to run each coding-agent program non-interactively inside the Sandbox, and how to read what
 * it prints (docs/coding-agents.md, "Claude Code, Codex, Gemini CLI and OpenCode"). What each switch is for was checked by
 * running the programs against the stand-in model servers (packages/fixtures/src/*-stand-in.ts;
 * apps/worker/src/agents/programs/programs.test.ts).
 *
 * Both programs run inside our Sandbox (bubblewrap), so their own permission prompts and sandboxes
 * are switched off or widened: the Sandbox is the boundary. Nothing is written into the workspace:
 * their state goes to the Sandbox's private /tmp (a fresh tmpfs per command, gone afterwards), and
 * the API key reaches them only as an environment variable (never a file, never argv).
 */
export interface ProgramRunInput {
  /** The Task's instructions. */
  prompt: string;
  /** The model name the endpoint expects. */
  model: string;
  /** The model endpoint's base URL, without `/v1` (e.g. http://model.internal:8080). */
  baseUrl: string;
  /** The secret the run was given for the model endpoint. */
  apiKey: string;
}

export interface ProgramRun {
  /** argv[0] is the program's bare command name (InstalledProgram.command). */
  argv: string[];
  env: Record<string, string>;
  /**
   * Settings files the runner writes into the run's private home (PRIVATE_HOME, relative to it)
   * before the program starts. Never a secret: the key reaches the program only through `env`.
   */
  home?: Record<string, string>;
}

/**
 * The run's private home, relative to the workspace (the program starts at its root): under `.git`,
 * so nothing there is ever committed, and gone with the run's workspace. The Sandbox's HOME is the
 * workspace itself, so a program that keeps its state under HOME is pointed here or at /tmp.
 */
export const PRIVATE_HOME = ".git/rhumbatron/home";

export interface ProgramPreset {
  name: AgentProgramName;
  /** The wire format of the model endpoint it calls. */
  wire: "anthropic-messages" | "openai-responses" | "gemini";
  build(input: ProgramRunInput): ProgramRun;
  /** Its stdout (JSON lines) as transcript steps. */
  parse(stdout: string): TranscriptStep[];
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Text of a tool_result's content (a string or a list of text blocks). */
export function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => str(obj(c).text) ?? "").join("");
  return "";
}

/** A timestamp as ISO text: Gemini CLI gives ISO strings, OpenCode milliseconds since the epoch. */
export function stampOf(v: unknown): { at?: string } {
  if (typeof v === "string" && v) return { at: v };
  if (typeof v === "number" && Number.isFinite(v)) return { at: new Date(v).toISOString() };
  return {};
}

/** "Exit Code: 1", "exit code 1", "exited with 1": the exit code a command's output states, if any. */
export function statedExitCode(text: string): number | null {
  const m = /exit(?:ed)?(?: with)?(?: code)?:?\s*(\d+)/i.exec(text);
  return m ? Number(m[1]) : null;
}
