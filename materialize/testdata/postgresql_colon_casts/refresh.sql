DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT ("properties"::jsonb ->> 'plan')::text AS "_k0", count(*) AS "_a0", sum(("properties"::json ->> 'amount')::numeric(12, 2)) AS "_a1", count(("properties"::json ->> 'amount')::numeric(12, 2)) AS "_a2", date_trunc('day', ("timestamp"::timestamp with time zone)::timestamp) AS "_v0" FROM "events" WHERE "event" ILIKE 'p%' AND "event" NOT ILIKE '%\_x' GROUP BY ("properties"::jsonb ->> 'plan')::text, date_trunc('day', ("timestamp"::timestamp with time zone)::timestamp);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v0");
