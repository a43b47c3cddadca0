DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT "event" AS "_k0", count(*) AS "_a0", date_trunc('day', ("timestamp")::timestamp) AS "to" FROM "events" GROUP BY "event", date_trunc('day', ("timestamp")::timestamp);
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("to");
