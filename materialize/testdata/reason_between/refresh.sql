DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT count(*) AS "_a0", "timestamp" AS "a", "timestamp" AS "b" FROM "events" GROUP BY "timestamp";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("a", "b", "_a0");
