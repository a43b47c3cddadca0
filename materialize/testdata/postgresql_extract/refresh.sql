DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT extract(hour FROM "timestamp"::timestamp) AS "_k0", count(*) AS "_a0", date_trunc('day', ("timestamp")::timestamp) AS "date_from", "properties"::jsonb ->> 'country' AS "_v1" FROM "events" GROUP BY extract(hour FROM "timestamp"::timestamp), date_trunc('day', ("timestamp")::timestamp), "properties"::jsonb ->> 'country';
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v1", "date_from");
