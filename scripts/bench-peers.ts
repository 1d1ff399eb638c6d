/**
 * `npm run bench -- peers`: the runtime's queue beside the job queues a team would pick instead,
 * graphile-worker and pg-boss (dev dependencies, run here on the same Postgres in the same run).
 * Each figure is a ratio to the same raw baseline, single-row INSERT commits by two clients:
 *   enqueue   two clients sending one job at a time for the bench's seconds:
 *               ours `sendCommand` (validated, deduplicated on the command ID, NOTIFY in the same
 *               statement), ours `enqueueCommand` inside a transaction (a state change's send),
 *               graphile-worker `addJob`, pg-boss `send`
 *   drain     one worker taking that backlog to done with a handler that does nothing:
 *               ours `consumeQueue` in batches, graphile-worker `runOnce`, pg-boss `fetch` and
 *               `complete` in batches of the same size
 */
import { loadConfig } from "@rhumbatron/core";
import { createDb, migrate } from "@rhumbatron/db";
import {
  type CommandHandler,
  consumeQueue,
  enqueueCommand,
  pgNotifyNudger,
  sendCommand,
  withTransaction,
} from "@rhumbatron/runtime";
import { Logger, makeWorkerUtils, runOnce } from "graphile-worker";
import PgBoss from "pg-boss";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;
type ForSeconds = (
  clients: number,
  body: (client: number, i: number) => Promise<void>,
) => Promise<{ n: number; ms: number }>;

export async function peersBench(
  openDatabase: OpenDatabase,
  emit: Emit,
  rawBaseline: (url: string) => Promise<{ rate: number }>,
  forSeconds: ForSeconds,
): Promise<void> {
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 4 });
  const config = loadConfig("dev");
  const batch = config.queues.policies.integration.batchSize;
  try {
    await db.tenant.create({ data: { id: "ten_bench", slug: "bench", name: "Bench" } });
    await db.project.create({ data: { id: "proj_bench", tenantId: "ten_bench", name: "bench", status: "active" } });
    // The baseline is measured first and last, and every figure is a ratio to the mean of the two, so a
    // machine that slows down or speeds up during the run does not favour whoever ran first.
    const first = await rawBaseline(dbh.url);
    const figures: { peer: string; what: string; n: number; rate: number; extra: Record<string, unknown> }[] = [];
    const figure = (peer: string, what: string, n: number, ms: number, extra: Record<string, unknown> = {}) => {
      figures.push({ peer, what, n, rate: (n / ms) * 1000, extra });
    };
    const deps = { config, nudger: pgNotifyNudger, now: () => new Date(), owner: "bench" };
    const command = (id: string) => ({
      commandId: id,
      commandType: "project.provision" as const,
      projectId: "proj_bench",
      payload: {},
    });

    const sent = await forSeconds(2, (c, i) => sendCommand(db, command(`cmd_send_${c}_${i}`), deps).then(() => {}));
    figure("rhumbatron sendCommand", "enqueue", sent.n, sent.ms);
    const inTx = await forSeconds(2, (c, i) =>
      withTransaction(db, (ctx) => enqueueCommand(ctx, command(`cmd_tx_${c}_${i}`), deps)).then(() => {}),
    );
    figure("rhumbatron enqueueCommand in a transaction", "enqueue", inTx.n, inTx.ms);
    const noop: CommandHandler = { commandTypes: ["project.provision"], handle: async () => "done" };
    let drained = 0;
    const t0 = performance.now();
    for (;;) {
      const r = await consumeQueue(db, "integration", [noop], deps);
      if (r.leased === 0) break;
      drained += r.actions.ack;
    }
    figure("rhumbatron consumeQueue", "drain", drained, performance.now() - t0, { batch });

    const quiet = new Logger(() => () => {});
    const utils = await makeWorkerUtils({ connectionString: dbh.url, logger: quiet });
    try {
      await utils.migrate();
      const added = await forSeconds(2, (c, i) => utils.addJob("bench", { c, i }).then(() => {}));
      figure("graphile-worker addJob", "enqueue", added.n, added.ms);
      const t1 = performance.now();
      await runOnce({
        connectionString: dbh.url,
        concurrency: 1,
        noHandleSignals: true,
        logger: quiet,
        taskList: { bench: async () => {} },
      });
      figure("graphile-worker runOnce", "drain", added.n, performance.now() - t1);
    } finally {
      await utils.release();
    }

    const boss = new PgBoss({ connectionString: dbh.url, supervise: false, schedule: false, max: 4 });
    boss.on("error", () => {});
    await boss.start();
    try {
      await boss.createQueue("bench");
      const bossSent = await forSeconds(2, (c, i) => boss.send("bench", { c, i }).then(() => {}));
      figure("pg-boss send", "enqueue", bossSent.n, bossSent.ms);
      let done = 0;
      const t2 = performance.now();
      for (;;) {
        const jobs = await boss.fetch("bench", { batchSize: batch });
        if (jobs.length === 0) break;
        await boss.complete(
          "bench",
          jobs.map((j) => j.id),
        );
        done += jobs.length;
      }
      figure("pg-boss fetch+complete", "drain", done, performance.now() - t2, { batch });
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
    const raw = (first.rate + (await rawBaseline(dbh.url)).rate) / 2;
    for (const f of figures) {
      emit({
        figure: `${f.what}_per_s`,
        peer: f.peer,
        value: Math.round(f.rate),
        n: f.n,
        ratio_to_raw: +(f.rate / raw).toFixed(3),
        ...f.extra,
      });
    }
  } finally {
    await db.$disconnect();
    await dbh.stop();
  }
}
