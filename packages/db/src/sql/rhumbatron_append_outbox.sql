-- rhumbatron_append_outbox.
-- Applied by prisma/migrations/20261203090000_outbox_append_index_probe/migration.sql (created by
-- 20261202170000_outbox_append_function). This file is its definition as the database holds it:
-- change it here, then add a migration that copies this CREATE OR REPLACE FUNCTION statement whole,
-- and name that migration above. packages/db/src/sql/functions.test.ts checks the migrated
-- database's function and the named migration against this file.
--
-- The outbox write of one domain write as one function call (packages/db/src/events/outbox.ts,
-- appendToOutbox and domainWrite), so its statements are planned once per connection instead of
-- on every write. p_input: [{"e": envelope, "s": stream index}, ...]; p_notify: the publisher's
-- channel to pg_notify when something was written (NULL: the caller nudges itself).
--  - a repeated event_id (already in the outbox) is skipped;
--  - each project's head advances by its number of fresh Events; heads are upserted in project
--    order, so two writers cannot deadlock, and stay locked until commit (sequence order = commit order);
--  - the fresh rows take consecutive project_seq ending at the new head.
-- Returns the IDs written, in sequence order.
-- Each input event_id is looked up in outbox's unique index, one probe per Event: OFFSET 0 keeps the
-- NOT EXISTS from being pulled up into a hash anti join over the whole outbox, a plan that, cached on
-- the connection while the table was small, read the entire outbox on every write.
CREATE OR REPLACE FUNCTION rhumbatron_append_outbox(p_input jsonb, p_notify text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  written text[];
BEGIN
  WITH input AS (
    SELECT x.ord, x.value->'e'->>'eventId' AS event_id, x.value->'e'->>'projectId' AS project_id,
      (x.value->>'s')::int AS stream_index, x.value->'e'->>'eventType' AS event_type, x.value->'e' AS envelope
    FROM jsonb_array_elements(p_input) WITH ORDINALITY AS x(value, ord)
  ),
  fresh AS (
    SELECT i.*, row_number() OVER (PARTITION BY i.project_id ORDER BY i.ord) AS k,
      count(*) OVER (PARTITION BY i.project_id) AS n
    FROM input i WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = i.event_id OFFSET 0)
  ),
  heads AS (
    INSERT INTO outbox_heads AS h (project_id, last_seq)
    SELECT f.project_id, count(*) FROM fresh f GROUP BY f.project_id ORDER BY f.project_id
    ON CONFLICT (project_id) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq
    RETURNING h.project_id, h.last_seq
  ),
  w AS (
    INSERT INTO outbox (event_id, project_id, project_seq, stream_index, event_type, envelope)
    SELECT f.event_id, f.project_id, h.last_seq - f.n + f.k, f.stream_index, f.event_type, f.envelope
    FROM fresh f JOIN heads h ON h.project_id = f.project_id
    ORDER BY f.project_id, f.k
    ON CONFLICT (event_id) DO NOTHING
    RETURNING outbox.event_id, outbox.project_id, outbox.project_seq
  )
  SELECT coalesce(array_agg(w.event_id ORDER BY w.project_id, w.project_seq), '{}') INTO written FROM w;
  IF p_notify IS NOT NULL AND cardinality(written) > 0 THEN
    PERFORM pg_notify(p_notify, '');
  END IF;
  RETURN written;
END
$$;
