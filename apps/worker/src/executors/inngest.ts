import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DomainError } from "@rhumbatron/core";
import { NUDGE_EVENT_PREFIX, nudgeEventName } from "@rhumbatron/runtime";
import type { Inngest, InngestFunction } from "inngest";
import { serve } from "inngest/node";
import { checkRegistry } from "../functions/index.ts";
import { DEFAULT_RUN_KEY, type RunTrigger, type WorkerFunction } from "../functions/types.ts";
import { createInngestClient, INNGEST_PATH, type InngestSettings } from "./inngest-client.ts";
import { type RunDeps, runFunction } from "./run.ts";
import type { Executor } from "./types.ts";

export {
  createInngestClient,
  INNGEST_APP_ID,
  INNGEST_PATH,
  INNGEST_SPLIT_APP_IDS,
  type InngestSettings,
  inngestNudgeSender,
  nudgeEventName,
} from "./inngest-client.ts";

/** checkRegistry keeps `retries` within Inngest's 0..20. */
type Retries = NonNullable<InngestFunction.Options["retries"]>;

function triggerOf(eventName: string | undefined): RunTrigger {
  if (eventName === "inngest/scheduled.timer") return "cron";
  if (eventName?.startsWith(NUDGE_EVENT_PREFIX)) return "nudge";
  return "manual";
}

/**
 * The registry as Inngest functions. Concurrency 1 per run key mirrors the local executor's
 * single-flight; the body is one `step.run`, so a retried run does not repeat a finished body.
 */
export function toInngestFunctions(client: Inngest, functions: WorkerFunction[], deps: RunDeps): InngestFunction.Any[] {
  return checkRegistry(functions).map((fn) => {
    const triggers = [
      ...(fn.triggers.cron ? [{ cron: fn.triggers.cron }] : []),
      ...(fn.triggers.nudge ? [{ event: nudgeEventName(fn.triggers.nudge) }] : []),
    ];
    return client.createFunction(
      { id: fn.id, retries: fn.retries as Retries, concurrency: { limit: 1, key: "event.data.key" }, triggers },
      async ({ event, step }) => {
        const data = (event.data ?? {}) as { key?: unknown };
        const key = typeof data.key === "string" && data.key !== "" ? data.key : DEFAULT_RUN_KEY;
        return step.run(fn.id, async () => {
          const outcome = await runFunction(fn, deps, key, triggerOf(event.name));
          // Rethrow the original error so Inngest records it and retries per `fn.retries`.
          if (outcome.record.outcome === "error") throw outcome.failure;
          return outcome.result ?? null;
        });
      },
    );
  });
}

export interface InngestExecutorOptions extends RunDeps {
  settings: InngestSettings;
  functions: WorkerFunction[];
  /** The Inngest app ID (INNGEST_SPLIT_APP_IDS.worker when the web app serves the other share). */
  appId?: string;
  /** Overrides settings.RHUMBATRON_WORKER_PORT; 0 picks a free port (tests). */
  port?: number;
  host?: string;
}

/** Serves the functions at INNGEST_PATH; Inngest (Cloud or self-hosted) schedules and calls them. */
export class InngestExecutor implements Executor {
  readonly kind = "inngest" as const;
  readonly client: Inngest;
  readonly inngestFunctions: InngestFunction.Any[];
  private readonly server: Server;
  private listening = false;

  constructor(private readonly options: InngestExecutorOptions) {
    this.client = createInngestClient(options.settings, options.logger, options.appId);
    this.inngestFunctions = toInngestFunctions(this.client, options.functions, options);
    const handler = serve({ client: this.client, functions: this.inngestFunctions, servePath: INNGEST_PATH });
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (path === INNGEST_PATH) return handler(req, res);
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
    });
  }

  /** The port actually listened on (useful when the option was 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async start(): Promise<void> {
    // In cloud mode the SDK answers every request with a 500 without a signing key; fail at start instead.
    if (this.client.mode === "cloud" && !this.options.settings.INNGEST_SIGNING_KEY) {
      throw new DomainError(
        "INVALID_CONFIG",
        "INNGEST_SIGNING_KEY is required with RHUMBATRON_EXECUTOR=inngest (or set INNGEST_DEV=1 for a local Inngest dev server)",
      );
    }
    const port = this.options.port ?? this.options.settings.RHUMBATRON_WORKER_PORT;
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, this.options.host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.listening = true;
    this.options.logger.info({ port: this.port, path: INNGEST_PATH }, "inngest serve handler listening");
  }

  /** Stops accepting requests and waits for in-flight ones (each is a run) to finish. */
  async stop(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve, reject) => this.server.close((err) => (err ? reject(err) : resolve())));
    this.server.closeIdleConnections();
    await closed;
  }
}

export function createInngestExecutor(options: InngestExecutorOptions): InngestExecutor {
  return new InngestExecutor(options);
}
