import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { WHOLE_WORKER_LIMIT } from "../apps/worker/src/test-world.ts";
import { S3RVER_CREDENTIALS, type S3rver, scaleTrial, startS3rver } from "./lib/scale-trial.testing.ts";

/**
 * Scale-out on real processes (docs/scale-out.md): three worker processes, each with a data folder
 * of its own, one Postgres, blobs in s3rver; worker 1 is the source service. Four Changes land by
 * themselves while the third worker is killed with SIGKILL holding work: the other two finish it,
 * nothing is done twice, and main holds every landed Change once (command-line git reads it back).
 */
const t = useTestDatabase();
let s3: S3rver | undefined;
afterAll(async () => {
  await s3?.stop();
});

describe("three workers that share only Postgres, the source service and a bucket", () => {
  it(
    "land every Change while one is killed with SIGKILL; no duplicate, main holds each generation once",
    async () => {
      s3 = await startS3rver();
      const bucket = await s3.createBucket();
      const r = await scaleTrial({
        db: t.db,
        databaseUrl: t.url,
        workers: 3,
        changes: 4,
        kill: true,
        s3: { endpoint: s3.endpoint, bucket, ...S3RVER_CREDENTIALS },
        limitMs: WHOLE_WORKER_LIMIT,
        log: () => {},
      });
      expect(r.killed?.worker).toBe(3);
      expect(r.invariants.invariants.filter((i) => !i.ok)).toEqual([]);
      expect({ landed: r.landed, duplicates: r.duplicates }).toEqual({ landed: 4, duplicates: 0 });
      // Every Evidence output went to the bucket, whichever worker ran the check.
      const outputs = (await t.db.evidence.findMany({ where: { outputKey: { not: null } } })).map((e) => e.outputKey);
      const keys = new Set(await s3.keys(bucket));
      expect(outputs.length).toBeGreaterThan(0);
      expect(outputs.filter((k) => !keys.has(k ?? ""))).toEqual([]);
    },
    WHOLE_WORKER_LIMIT,
  );
});
