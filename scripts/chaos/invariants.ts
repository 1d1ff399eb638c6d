import { execFileSync } from "node:child_process";
import pg from "pg";

/**
 * What must hold after any number of crashes, checked against the database and the canonical git
 * repository when the fault trial has settled. Each invariant is a count that must be 0 (or a
 * comparison that must hold); `ok` is false when any does not.
 */
export interface Invariant {
  name: string;
  ok: boolean;
  /** What was found: the offending count or values. */
  found: unknown;
}

export interface InvariantReport {
  ok: boolean;
  invariants: Invariant[];
}

async function count(db: pg.Client, sql: string, params: unknown[] = []): Promise<number> {
  const r = await db.query<{ n: string }>(sql, params);
  return Number(r.rows[0]?.n ?? 0);
}

const zero = (name: string, n: number): Invariant => ({ name, ok: n === 0, found: n });

export async function checkInvariants(o: {
  databaseUrl: string;
  projectId: string;
  changeIds: string[];
  /** The canonical repository's folder (bare), for git's own account of main. */
  canonicalRepoDir: string;
}): Promise<InvariantReport> {
  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  try {
    const inv: Invariant[] = [];
    const statuses = await db.query<{ id: string; status: string }>(
      "SELECT id, status FROM changes WHERE id = ANY($1::text[]) ORDER BY id",
      [o.changeIds],
    );
    const notFinal = statuses.rows.filter((r) => r.status !== "promoted");
    inv.push({
      name: "every Change reached its final state (promoted)",
      ok: statuses.rows.length === o.changeIds.length && notFinal.length === 0,
      found: notFinal.length === 0 ? statuses.rows.length : notFinal,
    });
    inv.push(
      zero(
        "no Event appears twice on the streams",
        await count(
          db,
          "SELECT count(*) AS n FROM (SELECT event_id FROM stream_entries GROUP BY event_id HAVING count(*) > 1) d",
        ),
      ),
    );
    inv.push(
      zero(
        "no outbox row lost: every row published and on a stream",
        await count(
          db,
          `SELECT count(*) AS n FROM outbox o
           WHERE o.state <> 'published' OR NOT EXISTS (SELECT 1 FROM stream_entries s WHERE s.event_id = o.event_id)`,
        ),
      ),
    );
    inv.push(
      zero(
        "each Change promoted exactly once (one generation, one promoted Candidate)",
        await count(
          db,
          `SELECT count(*) AS n FROM (
             SELECT c.change_id FROM canonical_generations g JOIN candidates c ON c.id = g.candidate_id
             WHERE g.project_id = $1 GROUP BY c.change_id HAVING count(*) <> 1
             UNION ALL
             SELECT change_id FROM candidates WHERE change_id = ANY($2::text[]) AND status = 'promoted'
             GROUP BY change_id HAVING count(*) <> 1) d`,
          [o.projectId, o.changeIds],
        ),
      ),
    );
    inv.push(
      zero(
        "no Evidence record twice (one per Candidate and check; no reruns were asked)",
        await count(
          db,
          `SELECT count(*) AS n FROM (SELECT candidate_id, check_id FROM evidence e
             JOIN candidates c ON c.id = e.candidate_id WHERE c.project_id = $1
             GROUP BY candidate_id, check_id HAVING count(*) > 1) d`,
          [o.projectId],
        ),
      ),
    );
    inv.push(
      zero(
        // A woken run (a wake received while the Task runs: work-graph/woken.ts) ends completed too; it is no result.
        "no Task has two finished runs for one attempt, or two ChangeSets",
        await count(
          db,
          `SELECT count(*) AS n FROM (
             SELECT task_id FROM agent_runs WHERE change_id = ANY($1::text[]) AND status = 'completed'
               AND reason IN ('dispatch', 'attempt') GROUP BY task_id, alternative HAVING count(*) > 1
             UNION ALL
             SELECT task_id FROM changesets WHERE change_id = ANY($1::text[])
               GROUP BY task_id, alternative HAVING count(*) > 1) d`,
          [o.changeIds],
        ),
      ),
    );
    inv.push(await noClaimLeftHeld(db));
    inv.push(zero("no command dead-lettered", await count(db, "SELECT count(*) AS n FROM dead_letters")));
    inv.push(await mainMatchesGenerations(db, o));
    return { ok: inv.every((i) => i.ok), invariants: inv };
  } finally {
    await db.end();
  }
}

/**
 * Nothing is stuck (a workflow or run still going on a live worker, such as a release after the
 * last promotion, is work in flight, not a held claim), no lease still in force belongs to a dead worker (one that stopped, or
 * has not beaten for worker.takeoverSeconds), and no command waits behind a lease that lapsed more
 * than a minute ago (every queue is polled at least once a minute). A lease that lapsed on a stream
 * cursor nobody needed since is free, not held: the next delivery takes it.
 */
async function noClaimLeftHeld(db: pg.Client): Promise<Invariant> {
  const dead = `(SELECT worker_id FROM worker_heartbeats
                 WHERE stopped_at IS NOT NULL OR last_beat_at < now() - interval '30 seconds')`;
  const r = await db.query<Record<string, string>>(
    `SELECT
       (SELECT count(*) FROM workflow_instances WHERE status = 'running' AND (lease_owner IN ${dead}
          OR leased_until < now() - interval '60 seconds'
          OR (leased_until IS NULL AND started_at < now() - interval '60 seconds')))
         AS "workflow instances stuck (dead holder, or unclaimed a minute)",
       (SELECT count(*) FROM agent_runs WHERE status = 'running' AND (runner_id IN ${dead}
          OR updated_at < now() - interval '15 minutes'))
         AS "Agent runs stuck (dead runner)",
       (SELECT count(*) FROM queue_messages WHERE leased_until > now() AND lease_owner IN ${dead})
         AS "queue leases held by a dead worker",
       (SELECT count(*) FROM stream_cursors WHERE leased_until > now() AND lease_owner IN ${dead})
         AS "cursor leases held by a dead worker",
       (SELECT count(*) FROM queue_messages
         WHERE lease_owner IS NOT NULL AND leased_until < now() - interval '60 seconds')
         AS "commands stuck behind a lapsed lease"`,
  );
  const found = Object.fromEntries(Object.entries(r.rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
  const ok = Object.values(found).every((n) => n === 0);
  return { name: "no claim left held: nothing running, no lease of a dead worker, no command stuck", ok, found };
}

/**
 * Git's own account: main's first-parent history is S0 then one commit per promotion, in order,
 * each the generation's recorded commit; a ref update made twice (or lost) breaks the sequence.
 */
async function mainMatchesGenerations(
  db: pg.Client,
  o: { projectId: string; canonicalRepoDir: string },
): Promise<Invariant> {
  const gens = await db.query<{ generation: number; commit: string }>(
    "SELECT generation, commit FROM canonical_generations WHERE project_id = $1 ORDER BY generation",
    [o.projectId],
  );
  const history = execFileSync("git", ["-C", o.canonicalRepoDir, "rev-list", "--first-parent", "--reverse", "main"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .filter(Boolean);
  const expected = gens.rows.map((g) => g.commit);
  const ok = history.length === expected.length && history.every((c, i) => c === expected[i]);
  return {
    name: "main holds each generation's commit once, in order (git rev-list --first-parent)",
    ok,
    found: ok ? history.length : { main: history, generations: expected },
  };
}
