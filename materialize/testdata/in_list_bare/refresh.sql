DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT date("timestamp") AS "_k0", "distinct_id" AS "_d0", "event" AS "events" FROM "events" GROUP BY date("timestamp"), "event", "distinct_id";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("events");
