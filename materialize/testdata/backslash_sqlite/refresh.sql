DROP TABLE IF EXISTS "stored_next";
CREATE TABLE "stored_next" AS SELECT count(*) AS "_a0", "distinct_id" AS "u" FROM "events" WHERE "event" = 'a\\' GROUP BY "distinct_id";
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
CREATE INDEX IF NOT EXISTS "stored_ix" ON "stored" ("u");
