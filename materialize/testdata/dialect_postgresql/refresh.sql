DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT date_trunc('day', "timestamp") AS "_k0", count(*) AS "_a0", date_trunc('day', ("timestamp")::timestamp) AS "date_from" FROM "events" WHERE "event" = 'it''s' GROUP BY date_trunc('day', "timestamp"), date_trunc('day', ("timestamp")::timestamp);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("date_from");
