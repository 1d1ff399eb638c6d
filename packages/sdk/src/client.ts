import {
  type AgentChoice,
  fixtureInput,
  sandboxBudgetSecondsSchema,
  secretNameSchema,
  setSecretInput,
} from "@rhumbatron/core";
import { createTRPCClient, httpBatchLink, type TRPCClient } from "@trpc/client";
import type { inferRouterOutputs } from "@trpc/server";
import superjson from "superjson";
import type { z } from "zod";
import { formatIssues, RhumbatronError, toRhumbatronError } from "./errors.ts";
import { parsePolicy } from "./policy.ts";
import type { AppRouter } from "./router.ts";
import { tenantLink } from "./tenant-link.ts";
import { type WatchOptions, type WatchResult, type WatchUpdate, watchChange } from "./watch.ts";
import { type ChangeDraft, parseChange, parseChangeJson } from "./work-graph.ts";

export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type Membership = RouterOutputs["tenants"]["mine"][number];
export type Project = RouterOutputs["projects"]["list"][number];
/** One project as its page shows it: status, where its source came from, and why it failed if it did. */
export type ProjectDetail = RouterOutputs["projects"]["overview"]["project"];
export type ChangeDetail = RouterOutputs["change"]["get"];
export type CandidateSummary = RouterOutputs["candidate"]["list"][number];
export type CandidateDetail = RouterOutputs["candidate"]["get"];
export type LandingResult = RouterOutputs["change"]["setLanding"];
export type LandingQueueEntry = RouterOutputs["landing"]["queue"][number];
export type LandingQueueStatus = RouterOutputs["landing"]["status"];
export type LandingQueueSetResult = RouterOutputs["landing"]["setState"];
export type RunContextPacket = RouterOutputs["change"]["contextPacket"];
export type TaskTranscripts = RouterOutputs["task"]["transcript"];
export type ApprovalResult = RouterOutputs["candidate"]["approve"];
export type PromoteResult = RouterOutputs["candidate"]["promote"];
export type CheckRerunResult = RouterOutputs["candidate"]["rerunCheck"];
export type ApprovalInterdiff = RouterOutputs["candidate"]["interdiff"];
export type CandidateChecks = RouterOutputs["candidate"]["checks"];
export type ProjectChecks = RouterOutputs["projects"]["checks"];
export type SandboxMeter = RouterOutputs["sandbox"]["meter"];
export type SandboxBudgetResult = RouterOutputs["sandbox"]["setBudget"];
export type FixturePublishResult = RouterOutputs["task"]["publishFixture"];
/** A tenant secret as the API lists it: its name, when and by whom it was set, never its value. */
export type TenantSecret = RouterOutputs["secrets"]["list"][number];
export type SetSecretResult = RouterOutputs["secrets"]["set"];
/** A fix by hand: what it does, and each file's whole new text or its deletion. */
export type FixtureDraft = z.input<typeof fixtureInput>;
export type ProjectPolicy = RouterOutputs["policy"]["get"];
export type PolicyUpdateResult = RouterOutputs["policy"]["update"];
/** One notification of the caller's inbox (docs/notifications.md). */
export type InboxItem = RouterOutputs["notifications"]["list"][number];
export type MarkReadResult = RouterOutputs["notifications"]["markRead"];

/** The tRPC endpoint under the web app's address (apps/web/src/app/api/trpc). */
export const TRPC_PATH = "/api/trpc";

export interface RhumbatronClientOptions {
  /** The web app's address, e.g. http://localhost:3000. */
  url: string;
  /** An API token (`rbt_…`, created at /settings/tokens); sent as `Authorization: Bearer`. */
  token?: string;
  /** The tenant to act in, by ID or slug. Default: the token's tenant (a token has exactly one). */
  tenant?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

export interface Whoami {
  /** The membership this client acts in. */
  tenant: Membership;
  /** Every membership the credentials carry (one for a token). */
  memberships: Membership[];
}

export interface CreateChangeOptions {
  /**
   * Idempotency key: a repeat with the same key returns the first Change (`created: false`).
   * Default: a new random key, so pass one to make a retry safe.
   */
  clientRequestId?: string;
  /** "Land when ready" (off by default): promoted without another click once verified and approved. */
  land?: boolean;
}

export type RhumbatronClient = ReturnType<typeof createRhumbatronClient>;

/**
 * A typed client for the Rhumbatron API. `trpc` is the raw tRPC client (every procedure of
 * AppRouter; a call that names no tenant acts in the token's); the helpers act in the token's
 * tenant and throw only RhumbatronError.
 */
export function createRhumbatronClient(opts: RhumbatronClientOptions) {
  const url = opts.url.replace(/\/+$/, "");
  const trpc: TRPCClient<AppRouter> = createTRPCClient<AppRouter>({
    links: [
      // A tenant's procedure called without a tenant acts in the credentials' tenant (tenant-link.ts).
      tenantLink(() => tenantId()),
      httpBatchLink({
        url: `${url}${TRPC_PATH}`,
        transformer: superjson,
        maxURLLength: 8000,
        headers: () => (opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      }),
    ],
  });

  /** Runs one call and turns whatever it throws into a RhumbatronError. */
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toRhumbatronError(err, url);
    }
  };

  let who: Promise<Whoami> | undefined;
  const whoami = (): Promise<Whoami> => {
    who ??= call(() => trpc.tenants.mine.query()).then((memberships) => ({
      tenant: pickTenant(memberships, opts.tenant, url),
      memberships,
    }));
    // A failure is not remembered: the next call asks again.
    who.catch(() => {
      who = undefined;
    });
    return who;
  };
  const tenantId = async () => (await whoami()).tenant.tenantId;

  const getChange = async (changeId: string): Promise<ChangeDetail> => {
    const t = await tenantId();
    return call(() => trpc.change.get.query({ tenantId: t, changeId }));
  };

  return {
    url,
    trpc,
    whoami,
    tenantId,

    async listProjects(): Promise<Project[]> {
      const t = await tenantId();
      return call(() => trpc.projects.list.query({ tenantId: t }));
    },

    /** One project: its status, source (template or an imported URL and branch) and failure reason. */
    async getProject(projectId: string): Promise<ProjectDetail> {
      const t = await tenantId();
      return (await call(() => trpc.projects.overview.query({ tenantId: t, projectId }))).project;
    },

    /**
     * Where the project's checks come from at its canonical head (its checks file, detected, the
     * file's problems, or none), what they are, and the latest setup runs.
     */
    async projectChecks(projectId: string): Promise<ProjectChecks> {
      const t = await tenantId();
      return call(() => trpc.projects.checks.query({ tenantId: t, projectId }));
    },

    /** A new project from the built-in template (the demo shop) at S0; getProject says when it is active. Admin token. */
    async createProject(name: string): Promise<{ projectId: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.create.mutate({ tenantId: t, name }));
    },

    /**
     * The Agent that works the project's Tasks unless a Task names its own (docs/agents.md, Choosing the
     * Agent); null gives the worker's default. `changed` is false when it already was. Admin token.
     */
    async setProjectAgent(
      projectId: string,
      agent: AgentChoice | null,
    ): Promise<{ agent: AgentChoice | null; changed: boolean }> {
      const t = await tenantId();
      return call(() => trpc.projects.setAgent.mutate({ tenantId: t, projectId, agent }));
    },

    /**
     * A new project from another repository's history (docs/repositories.md): `from` is an
     * http(s) URL, a file:// URL or an absolute path the server can read, without credentials;
     * `branch` defaults to the source's HEAD branch; `submodules` fetches what its gitlinks name
     * (docs/repositories.md, Submodules). The project starts provisioning; getProject
     * says when it is active, or why it failed. Admin token.
     */
    async importProject(
      name: string,
      from: string,
      options: { branch?: string; credentials?: { username: string; password: string }; submodules?: boolean } = {},
    ): Promise<{ projectId: string }> {
      const t = await tenantId();
      return call(() =>
        trpc.projects.import.mutate({
          tenantId: t,
          name,
          from,
          ...(options.branch === undefined ? {} : { branch: options.branch }),
          // Sent once; the server seals them for the worker and never answers them (docs/repositories.md).
          ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
          ...(options.submodules ? { submodules: true } : {}),
        }),
      );
    },

    /**
     * A new empty project waiting for a `git push` of an existing history (docs/repositories.md,
     * Pushing into an
     * empty project). The answer holds, once, the push URL, a one-time token and the `git push`
     * command to run in the repository; pushAccess issues a new token while the project waits. Admin token.
     */
    async createProjectForPush(
      name: string,
    ): Promise<{ projectId: string; url: string; token: string; expiresAt: Date; command: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.createForPush.mutate({ tenantId: t, name }));
    },

    /** A new push token for a project still waiting for its push; the one before stops working. Admin token. */
    async pushAccess(projectId: string): Promise<{ url: string; token: string; expiresAt: Date; command: string }> {
      const t = await tenantId();
      return call(() => trpc.projects.pushAccess.mutate({ tenantId: t, projectId }));
    },

    /**
     * Creates a Change from a Work Graph (JSON text or an object). It is checked here with the
     * server's own schema first: an invalid one throws BAD_REQUEST and sends nothing.
     */
    async createChange(
      projectId: string,
      change: string | ChangeDraft,
      options: CreateChangeOptions = {},
    ): Promise<{ changeId: string; created: boolean; clientRequestId: string }> {
      const input = typeof change === "string" ? parseChangeJson(change) : parseChange(change);
      const clientRequestId = options.clientRequestId ?? `sdk_${globalThis.crypto.randomUUID()}`;
      const t = await tenantId();
      const r = await call(() =>
        trpc.change.create.mutate({
          tenantId: t,
          projectId,
          clientRequestId,
          change: input,
          landWhenReady: options.land === true,
        }),
      );
      return { ...r, clientRequestId };
    },

    getChange,

    /**
     * Polls the Change until it or its newest Candidate is final (see WatchOutcome), calling
     * `onUpdate` with the Task states whenever one moved. Stop early with `signal`.
     */
    async watchChange(
      changeId: string,
      onUpdate: (update: WatchUpdate) => void | Promise<void> = () => {},
      options: WatchOptions = {},
    ): Promise<WatchResult> {
      const t = await tenantId();
      return watchChange(
        {
          change: getChange,
          candidates: (id) => call(() => trpc.change.candidates.query({ tenantId: t, changeId: id })),
        },
        changeId,
        onUpdate,
        options,
      );
    },

    async listCandidates(projectId: string, options: { limit?: number } = {}): Promise<CandidateSummary[]> {
      const t = await tenantId();
      return call(() => trpc.candidate.list.query({ tenantId: t, projectId, ...options }));
    },

    /** Plan, every Evidence record, every gap, approval state and the composed tree hash. */
    async getCandidate(candidateId: string): Promise<CandidateDetail> {
      const t = await tenantId();
      return call(() => trpc.candidate.get.query({ tenantId: t, candidateId }));
    },

    /**
     * What changed since a person last approved another Candidate of this Change (a recomposition):
     * the earlier approval, whether the tree and the Change's own diff are the same, and which files
     * the new base changed under it. Null when nobody approved another Candidate of the Change.
     */
    async approvalInterdiff(candidateId: string): Promise<ApprovalInterdiff> {
      const t = await tenantId();
      return call(() => trpc.candidate.interdiff.query({ tenantId: t, candidateId }));
    },

    /**
     * Where the Candidate's checks come from: the base's checks file (path and commit), or, for a
     * repository without one, the detected checks and the proposed file to commit.
     */
    async candidateChecks(candidateId: string): Promise<CandidateChecks> {
      const t = await tenantId();
      return call(() => trpc.candidate.checks.query({ tenantId: t, candidateId }));
    },

    /** Grants the approval for exactly this composed tree (40 hex digits, as `getCandidate` shows it). */
    async approve(candidateId: string, treeHash: string, note?: string): Promise<ApprovalResult> {
      const t = await tenantId();
      return call(() =>
        trpc.candidate.approve.mutate({ tenantId: t, candidateId, treeHash, ...(note ? { note } : {}) }),
      );
    },

    /** Rejects the Candidate (its tree, with a reason); the first decision is final. */
    async reject(candidateId: string, treeHash: string, note: string): Promise<ApprovalResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.reject.mutate({ tenantId: t, candidateId, treeHash, note }));
    },

    /**
     * Runs one check of a rejected Candidate again, when its latest Evidence ended in error or fail
     * (at most the configured number of reruns per check). Follow it with `watchChange`.
     */
    async rerunCheck(candidateId: string, checkId: string): Promise<CheckRerunResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.rerunCheck.mutate({ tenantId: t, candidateId, checkId }));
    },

    /** `promoted`, `alreadyPromoted`, `blocked` (with every block) or `stale`. */
    async promote(candidateId: string): Promise<PromoteResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.promote.mutate({ tenantId: t, candidateId }));
    },

    /** Turns "land when ready" on or off for a Change; on for a ready Change, it lands in queue order. */
    async setLanding(changeId: string, landWhenReady: boolean): Promise<LandingResult> {
      const t = await tenantId();
      return call(() => trpc.change.setLanding.mutate({ tenantId: t, changeId, landWhenReady }));
    },

    /** A project's landing queue: position, what each Change waits for, since when. */
    async landingQueue(projectId: string): Promise<LandingQueueEntry[]> {
      const t = await tenantId();
      return call(() => trpc.landing.queue.query({ tenantId: t, projectId }));
    },

    /** Whether the project's landing queue runs, is paused or drains, and since when. */
    async landingQueueStatus(projectId: string): Promise<LandingQueueStatus> {
      const t = await tenantId();
      return call(() => trpc.landing.status.query({ tenantId: t, projectId }));
    },

    /**
     * Pauses (nothing lands), drains (only what was verifying when it began lands) or resumes the
     * project's landing queue (admin). Resuming lands at once, in queue order, what is ready.
     */
    async setLandingQueue(projectId: string, state: "running" | "paused" | "draining"): Promise<LandingQueueSetResult> {
      const t = await tenantId();
      return call(() => trpc.landing.setState.mutate({ tenantId: t, projectId, state }));
    },

    /**
     * Gives a Change waiting in the landing queue a priority (0 to 1000, higher lands first among
     * the ready ones), or moves it to the front with "front" (admin).
     */
    async setLandingPriority(
      changeId: string,
      priority: number | "front",
    ): Promise<{ priority: number; previous: number; changed: boolean }> {
      const t = await tenantId();
      return call(() => trpc.landing.setPriority.mutate({ tenantId: t, changeId, priority }));
    },

    /**
     * The Context Packet an Agent run was given: each item's ID, path, size and why it was picked,
     * the budget used, and what did not fit. `packet` is null until the run has recorded one.
     */
    async contextPacket(runId: string): Promise<RunContextPacket> {
      const t = await tenantId();
      return call(() => trpc.change.contextPacket.query({ tenantId: t, runId }));
    },

    /** Cancels a Change that is not final: its runs stop, its open Candidates are cancelled; a repeat answers the same. */
    async cancelChange(changeId: string, reason: string): Promise<{ cancelled: true; candidates: string[] }> {
      const t = await tenantId();
      return call(() => trpc.change.cancel.mutate({ tenantId: t, changeId, reason }));
    },

    /**
     * The attempts of the Change's Task that asked for several, side by side (docs/attempts.md):
     * Agent, run, lines changed, Candidate and checks, tokens and cost; null when none did.
     */
    async attempts(changeId: string) {
      const t = await tenantId();
      return call(() => trpc.change.attempts.query({ tenantId: t, changeId }));
    },

    /** Picks the attempt that goes on (approver token): the others' open Candidates are cancelled. */
    async pickAttempt(changeId: string, attempt: number): Promise<{ picked: number; cancelled: string[] }> {
      const t = await tenantId();
      return call(() => trpc.change.pickAttempt.mutate({ tenantId: t, changeId, attempt }));
    },

    /**
     * A Task's Agent runs, newest first; a program Agent's run carries its transcript: each step
     * (messages, tool calls, commands with exit codes, files edited), tokens, cost and hosts reached.
     */
    async taskTranscript(taskId: string): Promise<TaskTranscripts> {
      const t = await tenantId();
      return call(() => trpc.task.transcript.query({ tenantId: t, taskId }));
    },

    /** A new attempt of a failed or blocked Task, or of a completed one whose Change's newest Candidate conflicted or was rejected. */
    async retryTask(taskId: string): Promise<{ taskId: string; attempt: number }> {
      const t = await tenantId();
      return call(() => trpc.task.retry.mutate({ tenantId: t, taskId }));
    },

    /**
     * Publishes a fix by hand as the Task's ChangeSet (docs/agents.md, Publishing a fix by hand): whole text
     * files and deletions. Checked here with the server's own schema first: a bad path, a file given
     * twice or more than 512 KB throws BAD_REQUEST and sends nothing. The worker commits the files
     * and completes the Task; the same fix again is the same command (`duplicate: true`).
     */
    async publishFixture(taskId: string, fixture: FixtureDraft): Promise<FixturePublishResult> {
      const parsed = fixtureInput.safeParse(fixture);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
        throw new RhumbatronError(
          "BAD_REQUEST",
          `the fix is not valid: ${formatIssues(issues)}; fix it and try again (nothing was sent)`,
          { issues },
        );
      }
      const t = await tenantId();
      return call(() => trpc.task.publishFixture.mutate({ tenantId: t, taskId, ...parsed.data }));
    },

    /** The tenant's Sandbox meter this month: used, reserved, the budget and its source, what used it. */
    async sandboxMeter(): Promise<SandboxMeter> {
      const t = await tenantId();
      return call(() => trpc.sandbox.meter.query({ tenantId: t }));
    },

    /**
     * Sets the tenant's monthly Sandbox budget in seconds (admin role). Checked here with the
     * server's own schema first: anything but a whole number from 1 to the maximum throws
     * BAD_REQUEST and sends nothing. A value below this month's use is allowed (`belowUsage`, `note`).
     */
    async setSandboxBudget(monthlySeconds: number): Promise<SandboxBudgetResult> {
      const parsed = sandboxBudgetSecondsSchema.safeParse(monthlySeconds);
      if (!parsed.success) {
        throw new RhumbatronError(
          "BAD_REQUEST",
          `the budget ${parsed.error.issues[0]?.message ?? "is invalid"}, got ${monthlySeconds} (nothing was sent)`,
          { issues: parsed.error.issues.map((i) => ({ path: "monthlySeconds", message: i.message })) },
        );
      }
      const t = await tenantId();
      return call(() => trpc.sandbox.setBudget.mutate({ tenantId: t, monthlySeconds: parsed.data }));
    },

    /** The tenant's secrets (admin role): names, when and by whom each was set; never a value. */
    async listSecrets(): Promise<TenantSecret[]> {
      const t = await tenantId();
      return call(() => trpc.secrets.list.query({ tenantId: t }));
    },

    /**
     * Sets a tenant secret, or replaces its value (admin role; docs/agents.md, Secrets). Checked here with
     * the server's own schema first: a bad name or value throws BAD_REQUEST and sends nothing. The
     * value is never sent back.
     */
    async setSecret(name: string, value: string): Promise<SetSecretResult> {
      const parsed = setSecretInput.safeParse({ name, value });
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
        throw new RhumbatronError("BAD_REQUEST", `${formatIssues(issues)} (nothing was sent)`, { issues });
      }
      const t = await tenantId();
      return call(() => trpc.secrets.set.mutate({ tenantId: t, ...parsed.data }));
    },

    /** Deletes a tenant secret (admin role); NOT_FOUND when the tenant has none of that name. */
    async deleteSecret(name: string): Promise<{ name: string }> {
      const parsed = secretNameSchema.safeParse(name);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: "name", message: i.message }));
        throw new RhumbatronError("BAD_REQUEST", `${formatIssues(issues)} (nothing was sent)`, { issues });
      }
      const t = await tenantId();
      return call(() => trpc.secrets.delete.mutate({ tenantId: t, name: parsed.data }));
    },

    /** The caller's inbox in the tenant, newest first; `unreadOnly` leaves out what was read. */
    async inbox(options: { unreadOnly?: boolean; limit?: number } = {}): Promise<InboxItem[]> {
      const t = await tenantId();
      return call(() => trpc.notifications.list.query({ tenantId: t, ...options }));
    },

    /** How many of the caller's notifications are unread. */
    async unreadCount(): Promise<number> {
      const t = await tenantId();
      return (await call(() => trpc.notifications.unreadCount.query({ tenantId: t }))).unread;
    },

    /** Marks one of the caller's notifications read (another person's is NOT_FOUND); a repeat marks nothing. */
    async markRead(notificationId: string): Promise<MarkReadResult> {
      const t = await tenantId();
      return call(() => trpc.notifications.markRead.mutate({ tenantId: t, notificationId }));
    },

    /** Marks every notification of the caller's inbox read. */
    async markAllRead(): Promise<MarkReadResult> {
      const t = await tenantId();
      return call(() => trpc.notifications.markRead.mutate({ tenantId: t, all: true }));
    },

    /** The project's active verification policy: its version and document (version 1: the defaults). */
    async getPolicy(projectId: string): Promise<ProjectPolicy> {
      const t = await tenantId();
      return call(() => trpc.policy.get.query({ tenantId: t, projectId }));
    },

    /** Every version of the project's policy, newest first, with who made it and when. */
    async policyHistory(projectId: string, options: { limit?: number } = {}): Promise<ProjectPolicy[]> {
      const t = await tenantId();
      return call(() => trpc.policy.history.query({ tenantId: t, projectId, ...options }));
    },

    /**
     * Makes `document` the project's policy, as a new version (admin role). Checked here with the
     * server's own schema first: a bad document throws BAD_REQUEST naming the fields and sends
     * nothing. `expectedVersion`: the version it was edited from; when another edit landed first the
     * server answers CONFLICT and writes nothing. The same document again is `changed: false`.
     */
    async setPolicy(
      projectId: string,
      document: unknown,
      options: { expectedVersion?: number } = {},
    ): Promise<PolicyUpdateResult> {
      const parsed = parsePolicy(document);
      const t = await tenantId();
      return call(() => trpc.policy.update.mutate({ tenantId: t, projectId, document: parsed, ...options }));
    },
  };
}

function pickTenant(memberships: Membership[], wanted: string | undefined, url: string): Membership {
  if (wanted) {
    const m = memberships.find((x) => x.tenantId === wanted || x.slug === wanted);
    if (m) return m;
    const have = memberships.map((x) => x.slug).join(", ") || "none";
    throw new RhumbatronError(
      "FORBIDDEN",
      `these credentials cannot act in tenant ${wanted} (they act in: ${have}); create a token for it at ${url}/settings/tokens`,
    );
  }
  const [only, ...rest] = memberships;
  if (!only) {
    throw new RhumbatronError(
      "FORBIDDEN",
      `these credentials belong to no tenant; ask a tenant admin to add you, then create a token at ${url}/settings/tokens`,
    );
  }
  if (rest.length > 0) {
    const slugs = memberships.map((x) => x.slug).join(", ");
    throw new RhumbatronError(
      "BAD_REQUEST",
      `these credentials act in several tenants (${slugs}); choose one with the tenant option (--tenant)`,
    );
  }
  return only;
}
