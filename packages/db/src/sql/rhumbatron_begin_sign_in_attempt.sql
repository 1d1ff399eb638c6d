-- rhumbatron_begin_sign_in_attempt.
-- Applied by prisma/migrations/20261203110000_sign_in_attempt_function/migration.sql (as CREATE
-- FUNCTION). This file is its definition as the database holds it: change it here, then add a
-- migration that copies this CREATE OR REPLACE FUNCTION statement whole, and name that migration
-- above. packages/db/src/sql/functions.test.ts checks the migrated database's function and the
-- named migration against this file.
--
-- A sign-in attempt's check and record as one function call (packages/db/src/auth/sign-in-attempts.ts),
-- so a burst of sign-ins never holds pooled connections in open transactions while they wait for each
-- other. p_keys: [{"scope", "key", "max", "windowMs"}, ...]; p_at: the caller's clock, UTC.
--  - each key's advisory lock is taken first, in (scope, key) order, and held until the call commits;
--  - every later statement sees what an earlier holder committed (a VOLATILE function reads with a
--    new snapshot per statement), so parallel attempts cannot all pass the check;
--  - attempts that left a key's window are deleted, then the key is blocked when `max` remain;
--  - only when no key is blocked is the attempt recorded under every key.
-- The queries run through EXECUTE, planned on each call: a plan cached while the table was small
-- would read the whole table once it is not.
-- Returns {"ok": true, "ids": [{"scope", "id"}]} or {"ok": false, "blocked": [{"scope", "untilMs"}]}.
CREATE OR REPLACE FUNCTION rhumbatron_begin_sign_in_attempt(p_keys jsonb, p_at timestamp(3)) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  k jsonb;
  since timestamp(3);
  oldest timestamp(3);
  new_id bigint;
  blocked jsonb := '[]'::jsonb;
  ids jsonb := '[]'::jsonb;
BEGIN
  FOR k IN SELECT value FROM jsonb_array_elements(p_keys) ORDER BY value->>'scope', value->>'key' LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('sign-in:' || (k->>'scope') || ':' || (k->>'key'), 0));
  END LOOP;
  FOR k IN SELECT value FROM jsonb_array_elements(p_keys) LOOP
    since := p_at - make_interval(secs => (k->>'windowMs')::numeric / 1000);
    EXECUTE 'DELETE FROM sign_in_attempts WHERE scope = $1 AND key = $2 AND at <= $3'
      USING k->>'scope', k->>'key', since;
    oldest := NULL;
    EXECUTE 'SELECT at FROM sign_in_attempts WHERE scope = $1 AND key = $2 AND at > $3 ORDER BY at DESC OFFSET $4 LIMIT 1'
      INTO oldest USING k->>'scope', k->>'key', since, (k->>'max')::int - 1;
    IF oldest IS NOT NULL THEN
      blocked := blocked || jsonb_build_object(
        'scope', k->>'scope',
        'untilMs', (extract(epoch FROM oldest) * 1000)::bigint + (k->>'windowMs')::bigint);
    END IF;
  END LOOP;
  IF jsonb_array_length(blocked) > 0 THEN
    RETURN jsonb_build_object('ok', false, 'blocked', blocked);
  END IF;
  FOR k IN SELECT value FROM jsonb_array_elements(p_keys) LOOP
    INSERT INTO sign_in_attempts (scope, key, at) VALUES (k->>'scope', k->>'key', p_at) RETURNING id INTO new_id;
    ids := ids || jsonb_build_object('scope', k->>'scope', 'id', new_id::text);
  END LOOP;
  RETURN jsonb_build_object('ok', true, 'ids', ids);
END
$$;
