DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT date_trunc('day', "timestamp") AS "_k0", count(*) AS "_a0", date_trunc('day', "timestamp") AS "date_from" FROM "events" WHERE "event" = 'it''s' GROUP BY date_trunc('day', "timestamp");
CREATE INDEX "stored_next_ix" ON "stored_next" ("date_from");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
