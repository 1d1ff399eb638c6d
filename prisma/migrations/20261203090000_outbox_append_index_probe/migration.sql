-- rhumbatron_append_outbox looks each input event_id up in outbox's unique index, one probe per
-- Event. Before, the planner could turn the NOT EXISTS into a hash anti join over the whole outbox:
-- a plan made while the table was small (or never analysed) and then cached on the connection for
-- good, so every write read the entire outbox (9 ms at 18,000 rows, growing with it). OFFSET 0
-- keeps the subquery from being pulled up into a join; everything else is unchanged.
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
