DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "uuid" AS "_c0", "timestamp" AS "_c1", "distinct_id" AS "user" FROM "events";
CREATE INDEX "stored_next_ix" ON "stored_next" ("user");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
