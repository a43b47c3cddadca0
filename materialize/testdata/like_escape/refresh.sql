DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT count(*) AS "_a0", "event" AS "pattern" FROM "events" GROUP BY "event";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("pattern", "_a0");
