DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT count(*) AS "_a0", "timestamp"::date AS "_v0" FROM "events" GROUP BY "timestamp"::date;
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("_v0");
