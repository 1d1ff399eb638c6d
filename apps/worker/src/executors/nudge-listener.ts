import { NUDGE_CHANNEL_PREFIX, pgNudgeChannel } from "@rhumbatron/runtime";
import pg from "pg";
import type { Logger } from "pino";
import type { DatabaseOutage } from "../outage.ts";
import { errorMessage } from "./run.ts";

export interface Backoff {
  minMs: number;
  maxMs: number;
}

export interface NudgeListenerOptions {
  databaseUrl: string;
  /** Bare channel names (`heartbeat`); each is listened to as `rhumbatron_<channel>`. */
  channels: string[];
  onNudge(channel: string, payload: string | undefined): void;
  /** Called after a reconnect: any nudge sent while the connection was down is lost. */
  onReconnect(): void;
  logger: Logger;
  backoff: Backoff;
  /** Where connection failures are reported first (outage.ts): an outage is one line, not one per attempt. */
  outage?: DatabaseOutage;
}

/**
 * LISTENs on one dedicated pg connection (never a pooled one: a pool would hand the connection to
 * other queries and drop the LISTEN). If the connection drops it reconnects, waiting
 * min·2^n ms up to max between failed attempts.
 */
export class NudgeListener {
  private client: pg.Client | undefined;
  private opening: Promise<unknown> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  /** The connection dropped during a database outage: the outage's lines tell it, not ours. */
  private quiet = false;

  constructor(private readonly options: NudgeListenerOptions) {}

  /** Resolves once LISTEN is active; rejects if the first connection fails (a wrong URL should fail fast). */
  async start(): Promise<void> {
    const opening = this.open();
    this.opening = opening;
    this.client = await opening;
    this.options.logger.info({ channels: this.options.channels }, "nudge listener connected");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.opening?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    await client?.end();
  }

  private async open(): Promise<pg.Client> {
    const { databaseUrl, channels, logger } = this.options;
    const client = new pg.Client({ connectionString: databaseUrl, application_name: "rhumbatron-worker-nudges" });
    // Without an error listener a dropped connection would crash the process; 'end' follows it.
    client.on("error", (err) => {
      if (!this.options.outage?.failed(err, { fromConnection: true }))
        logger.warn({ error: errorMessage(err) }, "nudge listener connection error");
    });
    try {
      await client.connect();
      // Channel names are validated identifiers (pgNudgeChannel), so interpolating them is safe.
      for (const channel of channels) await client.query(`LISTEN ${pgNudgeChannel(channel)}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    client.on("notification", (n) => {
      if (!n.channel.startsWith(NUDGE_CHANNEL_PREFIX)) return;
      this.options.onNudge(n.channel.slice(NUDGE_CHANNEL_PREFIX.length), n.payload || undefined);
    });
    client.on("end", () => this.onEnd(client));
    return client;
  }

  private onEnd(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.stopped) return;
    this.quiet = this.options.outage?.active ?? false;
    if (this.quiet) this.options.logger.debug("nudge listener disconnected; reconnecting");
    else this.options.logger.warn("nudge listener disconnected; reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const { minMs, maxMs } = this.options.backoff;
    const delay = Math.min(minMs * 2 ** this.failures, maxMs);
    // stop() awaits `opening`, so a reconnect in flight never leaves a connection behind.
    this.retryTimer = setTimeout(() => {
      this.opening = this.reconnect();
    }, delay);
  }

  /** Never throws: a failure schedules the next attempt. */
  private async reconnect(): Promise<void> {
    if (this.stopped) return;
    const { outage, logger, channels } = this.options;
    const began = outage?.now();
    try {
      const client = await this.open();
      if (this.stopped) {
        await client.end();
        return;
      }
      this.client = client;
      this.failures = 0;
      const endedOutage = began !== undefined && outage?.reached(began);
      if (endedOutage || this.quiet) logger.debug({ channels }, "nudge listener reconnected");
      else logger.info({ channels }, "nudge listener reconnected");
      this.quiet = false;
      this.options.onReconnect();
    } catch (err) {
      this.failures++;
      if (!outage?.failed(err, { fromConnection: true }))
        logger.warn({ error: errorMessage(err), failures: this.failures }, "nudge listener reconnect failed");
      this.scheduleReconnect();
    }
  }
}
