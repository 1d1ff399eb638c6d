/**
 * `npm run bench -- scale`: the landing of BENCH_SCALE_CHANGES (default 6) non-overlapping Changes
 * created together, on 1, 2 and 3 worker processes that share only Postgres, the source service
 * (worker 1) and an S3-compatible bucket (s3rver), each trial on a fresh database
 * (scripts/lib/scale-trial.testing.ts; the template's own checks, scripted Agents). One JSON line per
 * trial: Changes landed per minute and the ratio to one worker, measured in the same run. Then 3
 * workers again with the third killed with SIGKILL while it holds work: how many landed, of how
 * many, and the work done twice as the fault trial counts it (scripts/chaos/invariants.ts).
 */
import { createDb, migrate } from "@rhumbatron/db";
import { S3RVER_CREDENTIALS, type ScaleTrialResult, scaleTrial, startS3rver } from "./lib/scale-trial.testing.ts";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;

const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS ?? 20 * 60 * 1000);

export async function scaleBench(openDatabase: OpenDatabase, emit: Emit): Promise<void> {
  const changes = Number(process.env.BENCH_SCALE_CHANGES ?? 6);
  const s3 = await startS3rver();
  try {
    const trial = async (workers: number, kill: boolean): Promise<ScaleTrialResult> => {
      const dbh = await openDatabase();
      await migrate(dbh.url);
      const db = createDb(dbh.url, { maxConnections: 4 });
      try {
        const bucket = await s3.createBucket();
        return await scaleTrial({
          db,
          databaseUrl: dbh.url,
          workers,
          changes,
          kill,
          s3: { endpoint: s3.endpoint, bucket, ...S3RVER_CREDENTIALS },
          limitMs: LIMIT_MS,
          log: (line) => process.stderr.write(`bench scale: ${line}\n`),
        });
      } finally {
        await db.$disconnect();
        await dbh.stop();
      }
    };
    const perMin = (r: ScaleTrialResult) => +((r.landed / r.ms) * 60_000).toFixed(2);
    let one: number | null = null;
    for (const workers of [1, 2, 3]) {
      const r = await trial(workers, false);
      const rate = perMin(r);
      one ??= rate;
      emit({
        figure: "scale",
        workers,
        changes_landed_per_min: rate,
        ratio_to_one_worker: +(rate / one).toFixed(2),
        landed: r.landed,
        of: r.of,
        ms: r.ms,
        invariants_hold: r.invariants.ok,
      });
    }
    const k = await trial(3, true);
    emit({
      figure: "scale_kill",
      workers: 3,
      landed: k.landed,
      of: k.of,
      duplicates: k.duplicates,
      killed: k.killed,
      ms: k.ms,
      invariants_hold: k.invariants.ok,
      failed_invariants: k.invariants.invariants.filter((i) => !i.ok),
    });
  } finally {
    await s3.stop();
  }
}
