DROP TABLE IF EXISTS "stored_next";
DROP INDEX IF EXISTS "stored_next_ix";
CREATE TABLE "stored_next" AS SELECT "uuid" AS "_c0", "timestamp" AS "date_from" FROM "events";
CREATE INDEX "stored_next_ix" ON "stored_next" ("date_from");
DROP TABLE IF EXISTS "stored";
ALTER TABLE "stored_next" RENAME TO "stored";
